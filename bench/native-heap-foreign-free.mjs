// The free path of a chosen module for memory the guard did not allocate
// (another library's malloc): what the foreign quarantine costs per
// make+free (the library's malloc and fill, the module's free), in
// separate processes, alternating:
//   plain    no mate-guard in the process;
//   at once  the module chosen, the quarantine off (quarantineMaxCount 0:
//            the free goes straight to libc, as before the quarantine);
//   held     the module chosen, the quarantine on (the default: a stack
//            capture, a fill, a hold; once full, each free also checks and
//            releases the oldest block).
// Fixture: test/fixtures/foreign-free (the addon's churn(n, size)).
// Run: node bench/native-heap-foreign-free.mjs [--reps 7]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median, sideBySide } from './lib/side-by-side.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '..');
const FIX = path.join(ROOT, 'test', 'fixtures', 'foreign-free');
const CORE = path.join(ROOT, 'packages', 'core-native');
const SIZES = [
  [16, '16 B'],
  [64, '64 B'],
  [1024, '1 KiB'],
  [16384, '16 KiB'],
];
const self = fileURLToPath(import.meta.url);
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};

// ns per make+free of `size` bytes (n pairs, median of 5).
function perOp(addon, n, size) {
  const t = [];
  for (let k = 0; k < 5; k++) {
    const t0 = process.hrtime.bigint();
    addon.churn(n, size);
    t.push(Number(process.hrtime.bigint() - t0) / n);
  }
  return median(t);
}

if (process.argv[2] === '--child') {
  const [, , , variant, file] = process.argv;
  let core;
  if (variant !== 'plain') {
    core = require(CORE);
    core.installGuardAllocator({
      nativeModules: ['*foreign_addon.node'],
      ...(variant === 'at-once' ? { quarantineMaxCount: 0 } : {}),
    });
  }
  const addon = require(file);
  const out = {};
  for (const [size] of SIZES) {
    perOp(addon, 2000, size); // warm (and fill the quarantine: it is full from here on)
    out[size] = perOp(addon, size >= 16384 ? 20000 : 100000, size);
  }
  if (core && core.checkCanaries({ all: true }).length) throw new Error('a clean churn was reported');
  // The variant is what it says: held frees only with the quarantine on.
  if (core && core.stats().nativeForeignHeld > 0 !== (variant === 'held'))
    throw new Error(`${variant}: nativeForeignHeld ${core.stats().nativeForeignHeld}`);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-foreign-bench-'));
const lib = path.join(dir, 'libforeign_lib.so');
const addonFile = path.join(dir, 'foreign_addon.node');
execFileSync('c++', ['-shared', '-fPIC', '-O1', '-g', path.join(FIX, 'foreign_lib.cc'), '-o', lib]);
execFileSync('c++', [
  '-shared',
  '-fPIC',
  '-O1',
  '-g',
  '-DNODE_GYP_MODULE_NAME=foreign_addon',
  '-I',
  path.join(ROOT, 'node_modules', 'node-api-headers', 'include'),
  path.join(FIX, 'foreign_addon.cc'),
  '-L',
  dir,
  '-lforeign_lib',
  '-Wl,-rpath,$ORIGIN',
  '-o',
  addonFile,
]);

const reps = Number(arg('reps', 7));
const variants = ['plain', 'at-once', 'held'];
console.log(
  `foreign-free benchmark: node ${process.version}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`${reps} repetitions (alternating processes), median ns per make+free`);
console.log('');
const r = await sideBySide(variants, reps, (v) =>
  JSON.parse(execFileSync(process.execPath, [self, '--child', v, addonFile], { encoding: 'utf8' })),
);
const med = (vi, size) => median(r.times[vi].map((x) => x[size]));
console.log('| size | plain | chosen, quarantine off (at once) | chosen, held (default) | held / at once |');
console.log('|---|---|---|---|---|');
for (const [size, label] of SIZES) {
  const [p, a, h] = [0, 1, 2].map((i) => med(i, size));
  console.log(`| ${label} | ${p.toFixed(0)} ns | ${a.toFixed(0)} ns | ${h.toFixed(0)} ns | ${(h / a).toFixed(2)}x |`);
}
fs.rmSync(dir, { recursive: true, force: true });
