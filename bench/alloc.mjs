// Guarded allocate+free vs Buffer.alloc and Buffer.allocUnsafe, from JS,
// side by side in one process: the variants alternate within each
// repetition and the median per-operation time of each is compared.
// Run: node --expose-gc bench/alloc.mjs [--reps 7] [--captureStacks false]
import { createRequire } from 'node:module';

import { median } from './lib/side-by-side.mjs';

const require = createRequire(import.meta.url);
const core = require('../packages/core-native');

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc');
  process.exit(2);
}
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const reps = Number(arg('reps', 7));
const captureStacks = arg('captureStacks', 'true') !== 'false';

// The engine's own allocators, kept before install patches Buffer.
const plainAlloc = Buffer.alloc.bind(Buffer);
const plainUnsafe = Buffer.allocUnsafe.bind(Buffer);
core.installGuardAllocator({ captureStacks });

const SIZES = [
  { label: '16 B', size: 16, n: 20000 },
  { label: '4 KiB', size: 4096, n: 20000 },
  { label: '64 KiB', size: 65536, n: 4000 },
  { label: '1 MiB', size: 1 << 20, n: 400 },
];
const VARIANTS = {
  'Buffer.alloc': plainAlloc,
  'Buffer.allocUnsafe': plainUnsafe,
  guarded: (n) => core.guardedBuffer(n),
};

const turn = () => new Promise((r) => setImmediate(r));
let sink = 0;

// One timed round: allocate n buffers, touch each (first and last byte, as
// a user would), drop them, then one full collection and two event-loop
// turns so that every free (GC, then Node-API finalizers) is inside the
// measurement for every variant. No collections are forced inside the loop:
// they would cost the baseline more than the allocations themselves.
async function round(fn, size, n) {
  gc();
  await turn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const b = fn(size);
    if (size) { b[0] = i; b[size - 1] = i; sink += b[0]; }
  }
  gc();
  await turn();
  await turn();
  return Number(process.hrtime.bigint() - t0) / n; // ns per allocate+free
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(0)} ns`);

console.log(`mate-guard allocate+free benchmark: node ${process.version}, ${reps} repetitions, median per operation, captureStacks=${captureStacks}, guard method ${core.stats().guardMethod}`);
console.log('| size | Buffer.alloc | Buffer.allocUnsafe | guarded | guarded / alloc | guarded / allocUnsafe |');
console.log('|---|---|---|---|---|---|');
for (const { label, size, n } of SIZES) {
  const times = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
  await round(VARIANTS.guarded, size, Math.min(n, 1000)); // warm up
  for (let r = 0; r < reps; r++) {
    for (const [name, fn] of Object.entries(VARIANTS)) times[name].push(await round(fn, size, n));
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  console.log(`| ${label} | ${fmt(m['Buffer.alloc'])} | ${fmt(m['Buffer.allocUnsafe'])} | ${fmt(m.guarded)} | ${(m.guarded / m['Buffer.alloc']).toFixed(2)}x | ${(m.guarded / m['Buffer.allocUnsafe']).toFixed(2)}x |`);
}
if (sink === 0.5) console.log(sink);
