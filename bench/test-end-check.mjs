// What each test's end costs with N guarded buffers kept live (the check
// reads every live allocation's canary while there are at most 4,096, only
// those made since the last check above that): a test bracket
// (beginGuardedTest / endGuardedTest, what every runner plugin calls)
// around a test that makes two 64-byte buffers, per test, beside the same
// bracket with nothing kept. Each size in a fresh process, sizes
// alternating, medians of the repetitions.
// Run: node bench/test-end-check.mjs [--reps 7] [--tests 300]
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { median } from './lib/side-by-side.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const reps = arg('reps', 7);
const tests = arg('tests', 300);

/** In a child: microseconds per test with `live` buffers kept, and how many were guarded live. */
function child(live) {
  const require = createRequire(import.meta.url);
  const core = {
    ...require('../packages/core-native/dist/index.js'),
    ...require('../packages/core-native/dist/internal.js'),
  };
  core.installGuardAllocator({ mode: 'tail' });
  const keep = Array.from({ length: live }, () => Buffer.alloc(64));
  core.checkCanaries({ all: true });
  const guarded = core.stats().live;
  const start = process.hrtime.bigint();
  for (let t = 0; t < tests; t++) {
    core.beginGuardedTest(`bench > test ${t}`);
    const a = Buffer.alloc(64);
    const b = Buffer.alloc(64);
    a[0] = b[0] = 1;
    core.endGuardedTest();
  }
  const us = Number(process.hrtime.bigint() - start) / 1e3 / tests;
  console.log(JSON.stringify({ us, guarded, kept: keep.length }));
}

const childAt = process.argv.indexOf('--child');
if (childAt > 0) {
  child(Number(process.argv[childAt + 1]));
} else {
  const sizes = [0, 1000, 3500, 5000, 20000];
  const times = new Map(sizes.map((n) => [n, []]));
  const guardedLive = new Map();
  const self = fileURLToPath(import.meta.url);
  for (let r = 0; r < reps; r++)
    for (const n of sizes) {
      const out = spawnSync(process.execPath, [self, '--child', String(n), '--tests', String(tests)], {
        encoding: 'utf8',
      });
      if (out.status !== 0) throw new Error(`child ${n} failed:\n${out.stderr}`);
      const { us, guarded } = JSON.parse(out.stdout.trim().split('\n').at(-1));
      times.get(n).push(us);
      guardedLive.set(n, guarded);
    }
  const base = median(times.get(0));
  console.log(`| buffers kept live | guarded live | us per test (median of ${reps}) | / none kept |`);
  console.log('|---|---|---|---|');
  for (const n of sizes) {
    const m = median(times.get(n));
    console.log(`| ${n} | ${guardedLive.get(n)} | ${m.toFixed(1)} | ${(m / base).toFixed(2)}x |`);
  }
}
