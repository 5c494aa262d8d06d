// Guarded allocate+free vs Buffer.alloc, from JS.
// Each size runs in a process of its own (so each row has its own peak
// RSS); inside it the variants alternate within each repetition and the
// median per-operation time of each is compared. With --baseline, the same
// children run against another build's core package, alternating with this
// build's, and the runs' ratios are compared.
// Run: node --expose-gc bench/alloc.mjs [--reps 7] [--n <count per round>]
//        [--runs 1] [--sizes 16,4096,65536,1048576] [--captureStacks false]
//        [--mprotect] [--baseline <repo root or core-native dir of another build>]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './lib/side-by-side.mjs';

const require = createRequire(import.meta.url);
const self = fileURLToPath(import.meta.url);
const CORE = path.resolve(path.dirname(self), '..', 'packages', 'core-native');

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc');
  process.exit(2);
}
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const flag = (name) => process.argv.includes(`--${name}`);
const reps = Number(arg('reps', 7));
const captureStacks = arg('captureStacks', 'true') !== 'false';

// Counts per round: the 16 B and 4 KiB rounds make 20,000 buffers unless --n says.
const DEFAULT_N = { 16: 20000, 4096: 20000, 65536: 4000, [1 << 20]: 400 };
const LABEL = { 16: '16 B', 4096: '4 KiB', 65536: '64 KiB', [1 << 20]: '1 MiB' };
const label = (size) => LABEL[size] ?? `${size} B`;
const countFor = (size) => {
  const n = arg('n', '');
  return n ? Math.max(1, Math.min(Number(n), size >= 1 << 20 ? 400 : Infinity)) : (DEFAULT_N[size] ?? 4000);
};

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(0)} ns`);
const mib = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;

// CPU time of the calling (JS) thread in ns (Linux schedstat): what the
// allocating thread itself spends, without the background thread's share.
function jsThreadNs() {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return 0;
  }
}

// ---- child: one size, one build --------------------------------------------
async function child() {
  const core = require(arg('core', CORE));
  const size = Number(arg('size', '16'));
  const n = countFor(size);
  // The engine's own allocators, kept before install patches Buffer.
  const plainAlloc = Buffer.alloc.bind(Buffer);
  core.installGuardAllocator({ captureStacks });
  const VARIANTS = {
    'Buffer.alloc': plainAlloc,
    guarded: (k) => core.guardedBuffer(k),
  };
  const turn = () => new Promise((r) => setImmediate(r));
  let sink = 0;
  // One timed round: allocate n buffers, touch each (first and last byte, as
  // a user would), drop them, then one full collection and two event-loop
  // turns so that every free (GC, then Node-API finalizers) is inside the
  // measurement for every variant. No collections are forced inside the
  // loop: they would cost the baseline more than the allocations themselves.
  // `sampleEvery` > 0: an untimed round that reads RSS along the way.
  async function round(fn, sampleEvery = 0) {
    gc();
    await turn();
    let peak = 0;
    const j0 = jsThreadNs();
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const b = fn(size);
      b[0] = i;
      b[size - 1] = i;
      sink += b[0];
      if (sampleEvery && i % sampleEvery === 0) peak = Math.max(peak, process.memoryUsage.rss());
    }
    if (sampleEvery) peak = Math.max(peak, process.memoryUsage.rss());
    gc();
    await turn();
    await turn();
    const wall = Number(process.hrtime.bigint() - t0) / n;
    const c = process.cpuUsage(c0);
    return { wall, cpu: ((c.user + c.system) * 1000) / n, js: (jsThreadNs() - j0) / n, peak };
  }
  const names = Object.keys(VARIANTS);
  const out = Object.fromEntries(names.map((k) => [k, { wall: [], cpu: [], js: [], rss: 0 }]));
  await round(VARIANTS.guarded); // warm up
  await round(VARIANTS['Buffer.alloc']);
  for (let r = 0; r < reps; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const m = await round(VARIANTS[name]);
      out[name].wall.push(m.wall);
      out[name].cpu.push(m.cpu);
      out[name].js.push(m.js);
    }
  }
  // Peak RSS of one round of each variant, read 32 times along it (untimed).
  for (const name of names) out[name].rss = (await round(VARIANTS[name], Math.max(1, Math.floor(n / 32)))).peak;
  const s = core.stats();
  if (sink === 0.5) console.error(sink);
  process.stdout.write(
    JSON.stringify({
      size,
      n,
      variants: out,
      maxRss: process.resourceUsage().maxRSS * 1024,
      guardMethod: s.guardMethod,
      allocations: s.allocations,
      fallbacks: s.fallbacks,
      fallbackReasons: s.fallbackReasons ?? {},
      primed: s.primedAllocations,
    }),
  );
}

// ---- parent: every size in its own process, builds alternating --------------
function parent() {
  const sizes = arg('sizes', '16,4096,65536,1048576').split(',').map(Number);
  const runs = Number(arg('runs', 1));
  const baseline = arg('baseline', '');
  const builds = [{ name: 'this build', core: CORE }];
  if (baseline) {
    const b = path.resolve(baseline);
    const core = fs.existsSync(path.join(b, 'packages', 'core-native')) ? path.join(b, 'packages', 'core-native') : b;
    builds.push({ name: `baseline (${baseline})`, core });
  }
  const env = { ...process.env };
  if (flag('mprotect')) env.MATE_GUARD_FORCE_MPROTECT = '1';
  const passed = ['--reps', String(reps), '--captureStacks', String(captureStacks)];
  if (arg('n', '')) passed.push('--n', arg('n', ''));
  // results[build][size] = [child result per run]
  const results = builds.map(() => Object.fromEntries(sizes.map((s) => [s, []])));
  for (let r = 0; r < runs; r++) {
    for (const size of sizes) {
      for (let k = 0; k < builds.length; k++) {
        const bi = (k + r) % builds.length;
        const json = execFileSync(
          process.execPath,
          ['--expose-gc', self, '--child', '--core', builds[bi].core, '--size', String(size), ...passed],
          { encoding: 'utf8', env, maxBuffer: 1 << 24 },
        );
        results[bi][size].push(JSON.parse(json));
      }
    }
  }
  const first = results[0][sizes[0]][0];
  console.log(
    `mate-guard allocate+free benchmark: node ${process.version}, ${runs} run(s) x ${reps} repetitions, median per operation, captureStacks=${captureStacks}, guard method ${first.guardMethod}`,
  );
  console.log(
    "wall, CPU (user+system, all threads) and JS-thread CPU (schedstat) per allocate+free; ratios are the median of the runs' in-process ratios; RSS: peak of one round of that variant",
  );
  for (let bi = 0; bi < builds.length; bi++) {
    console.log('');
    console.log(`${builds[bi].name}:`);
    console.log(
      '| size | n | Buffer.alloc | guarded | guarded / alloc | CPU alloc | CPU guarded | CPU ratio | JS thread alloc | JS thread guarded | JS thread ratio | per-run wall ratios | RSS alloc | RSS guarded | unguarded | primed |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const size of sizes) {
      const rs = results[bi][size];
      const med = (v, f) => median(rs.map((x) => median(x.variants[v][f])));
      const ratios = rs.map((x) => median(x.variants.guarded.wall) / median(x.variants['Buffer.alloc'].wall));
      const cpuRatios = rs.map((x) => median(x.variants.guarded.cpu) / median(x.variants['Buffer.alloc'].cpu));
      const jsRatios = rs.map((x) => median(x.variants.guarded.js) / median(x.variants['Buffer.alloc'].js));
      const rssA = median(rs.map((x) => x.variants['Buffer.alloc'].rss));
      const rssG = median(rs.map((x) => x.variants.guarded.rss));
      const unguarded = rs.map((x) => `${x.fallbacks}/${x.allocations + x.fallbacks}`).join(' ');
      // Share of guarded allocations that found a slot a primer made ready (builds that count them).
      const primed = rs
        .map((x) => (x.primed === undefined ? '-' : `${Math.round((100 * x.primed) / x.allocations)}%`))
        .join(' ');
      console.log(
        `| ${label(size)} | ${rs[0].n} | ${fmt(med('Buffer.alloc', 'wall'))} | ${fmt(med('guarded', 'wall'))} | ${median(ratios).toFixed(2)}x | ${fmt(med('Buffer.alloc', 'cpu'))} | ${fmt(med('guarded', 'cpu'))} | ${median(cpuRatios).toFixed(2)}x | ${fmt(med('Buffer.alloc', 'js'))} | ${fmt(med('guarded', 'js'))} | ${median(jsRatios).toFixed(2)}x | ${ratios.map((x) => x.toFixed(2)).join(' ')} | ${mib(rssA)} | ${mib(rssG)} | ${unguarded} | ${primed} |`,
      );
    }
  }
  if (builds.length > 1) {
    console.log('');
    console.log(
      '| size | guarded, this build | guarded, baseline | this / baseline (wall) | this / baseline (CPU) | this / baseline (JS thread) |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const size of sizes) {
      const g = (bi, f) => median(results[bi][size].map((x) => median(x.variants.guarded[f])));
      console.log(
        `| ${label(size)} | ${fmt(g(0, 'wall'))} | ${fmt(g(1, 'wall'))} | ${(g(0, 'wall') / g(1, 'wall')).toFixed(2)}x | ${(g(0, 'cpu') / g(1, 'cpu')).toFixed(2)}x | ${(g(0, 'js') / g(1, 'js')).toFixed(2)}x |`,
      );
    }
  }
}

if (flag('child')) await child();
else parent();
