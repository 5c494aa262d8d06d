// Native heap guarding, per malloc+free made by native code:
//  1. an unchosen module: its malloc+free in a process where another
//     module's heap is guarded vs in a process without mate-guard (its
//     import slots are untouched, so this must stay at 1.0x);
//  2. a chosen module: guarded malloc+free of 64 B and 4 KiB vs libc's,
//     side by side in one process (two copies of the example addon, one
//     chosen, one not).
// Run: node bench/native-heap.mjs [--reps 7]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median, sideBySide } from './lib/side-by-side.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const reps = Number(arg('reps', 7));
const ADDON = path.join(here, '..', 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');
const CORE = path.join(here, '..', 'packages', 'core-native');

// A copy of the addon under another name: the module that is not chosen.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-native-bench-'));
const OTHER = path.join(dir, 'other_addon.node');
fs.copyFileSync(ADDON, OTHER);

// ns per malloc+free of `size` bytes made inside `addon` (n pairs, median of 5).
function perOp(addon, n, size) {
  const t = [];
  for (let k = 0; k < 5; k++) {
    const t0 = process.hrtime.bigint();
    addon.nativeHeap.churn(n, size);
    t.push(Number(process.hrtime.bigint() - t0) / n);
  }
  return median(t);
}

if (process.argv[2] === '--child') {
  // One measurement of the unchosen module, with or without mate-guard.
  const guarded = process.argv[3] === 'guarded';
  if (guarded) require(CORE).installGuardAllocator({ nativeModules: ['*buggy_addon.node'] });
  if (guarded) require(ADDON);
  const other = require(OTHER);
  perOp(other, 200000, 64); // warm
  process.stdout.write(String(perOp(other, 1000000, 64)));
  process.exit(0);
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(1)} ns`);
const self = fileURLToPath(import.meta.url);

// 1. The unchosen module, in separate processes (a process is either
// guarded or not), alternating.
const untouched = await sideBySide(['plain', 'guarded'], reps, (v) =>
  Number(execFileSync(process.execPath, [self, '--child', v], { encoding: 'utf8' })),
);
console.log(`mate-guard native heap benchmark: node ${process.version}, ${reps} repetitions, median per malloc+free`);
console.log('| module | without mate-guard | another module guarded | ratio |');
console.log('|---|---|---|---|');
console.log(`| not chosen, 64 B | ${fmt(untouched.medians[0])} | ${fmt(untouched.medians[1])} | ${(untouched.medians[1] / untouched.medians[0]).toFixed(2)}x |`);

// 2. The chosen module vs libc, in one process.
const core = require(CORE);
core.installGuardAllocator({ nativeModules: ['*buggy_addon.node'] });
const chosen = require(ADDON);
const other = require(OTHER);
console.log('');
console.log('| size | libc (module not chosen) | guarded (module chosen) | ratio |');
console.log('|---|---|---|---|');
for (const [label, size] of [['64 B', 64], ['4 KiB', 4096]]) {
  const before = core.stats().nativeAllocations;
  const r = await sideBySide(['libc', 'guarded'], reps, (v) =>
    v === 'libc' ? perOp(other, 200000, size) : perOp(chosen, 5000, size),
  );
  if (core.stats().nativeAllocations - before === 0) throw new Error('nothing was guarded');
  console.log(`| ${label} | ${fmt(r.medians[0])} | ${fmt(r.medians[1])} | ${(r.medians[1] / r.medians[0]).toFixed(0)}x |`);
}
fs.rmSync(dir, { recursive: true, force: true });
