// Native heap guarding, per malloc+free made by native code, and on a suite:
//  1. an unchosen module: its malloc+free in a process where another
//     module's heap is guarded vs in a process without mate-guard (its
//     malloc is untouched; its free passes the free router's range test
//     first: this must stay at 1.0x);
//  2. a chosen module: guarded malloc+free of 16 B, 64 B, 4 KiB and 64 KiB
//     (native stacks on, as by default) vs libc's (an unchosen copy of the
//     same addon, same process), for this build and, with --baseline, for
//     another build of core (e.g. main's), in alternating processes;
//  3. what the kernel's part of one slot cycle costs on this machine
//     (bench/native/slot-cycle.c, when a C compiler is there);
//  4. a suite: bench/fixtures/native-heap-suite.test.mjs (node:test, about
//     100 native allocations and some JS work per test) plain vs under
//     `mate guard-run --native` (every allocation of the addon guarded) vs
//     `--native` choosing another module (the addon's frees only pass the
//     free router), wall time, CPU time and peak RSS.
// Run: node bench/native-heap.mjs [--reps 7] [--suite-reps 5] [--suite-tests 1000]
//        [--baseline <core-native package dir of another build>]
import { execFileSync, spawnSync } from 'node:child_process';
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
const suiteReps = Number(arg('suite-reps', 5));
const suiteTests = Number(arg('suite-tests', 1000));
const baseline = arg('baseline', '');
const ADDON = path.join(here, '..', 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');
const CORE = path.join(here, '..', 'packages', 'core-native');
const SUITE = path.join(here, 'fixtures', 'native-heap-suite.test.mjs');
const STATS = path.join(here, 'lib', 'print-native-stats.cjs');
const SIZES = [
  [16, '16 B'],
  [64, '64 B'],
  [4096, '4 KiB'],
  [65536, '64 KiB'],
];
const self = fileURLToPath(import.meta.url);

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
  const [, , , what, other] = process.argv;
  if (what === 'plain' || what === 'guarded') {
    // The unchosen module, with or without mate-guard in the process.
    if (what === 'guarded') {
      require(CORE).installGuardAllocator({ nativeModules: ['*buggy_addon.node'] });
      require(ADDON);
    }
    const m = require(other);
    perOp(m, 200000, 64); // warm
    process.stdout.write(String(perOp(m, 1000000, 64)));
  } else {
    // `what` is a core package dir: its guarded malloc+free at every size,
    // and libc's (the unchosen copy `other`) beside it.
    const core = require(what);
    core.installGuardAllocator({ nativeModules: ['*buggy_addon.node'] });
    const chosen = require(ADDON);
    const unchosen = require(other);
    const out = {};
    for (const [size] of SIZES) {
      const before = core.stats().nativeAllocations;
      perOp(chosen, 200, size); // warm
      const guarded = perOp(chosen, size >= 65536 ? 1000 : 4000, size);
      if (core.stats().nativeAllocations - before === 0) throw new Error('nothing was guarded');
      out[size] = { guarded, libc: perOp(unchosen, 100000, size) };
    }
    process.stdout.write(JSON.stringify(out));
  }
  process.exit(0);
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(1)} ns`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-native-bench-'));
const OTHER = path.join(dir, 'other_addon.node'); // the module that is not chosen
fs.copyFileSync(ADDON, OTHER);

console.log(
  `mate-guard native heap benchmark: node ${process.version}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`${reps} repetitions, median per malloc+free; native stacks on (the default)`);
console.log('');

// 1. The unchosen module, in separate processes (a process is either
// guarded or not), alternating.
const untouched = await sideBySide(['plain', 'guarded'], reps, (v) =>
  Number(execFileSync(process.execPath, [self, '--child', v, OTHER], { encoding: 'utf8' })),
);
console.log('| module | without mate-guard | another module guarded | ratio |');
console.log('|---|---|---|---|');
console.log(
  `| not chosen, 64 B | ${fmt(untouched.medians[0])} | ${fmt(untouched.medians[1])} | ${(untouched.medians[1] / untouched.medians[0]).toFixed(2)}x |`,
);
console.log('');

// 2. The chosen module, this build (and the baseline build), alternating.
const builds = baseline ? [CORE, path.resolve(baseline)] : [CORE];
const perSize = await sideBySide(builds, reps, (b) =>
  JSON.parse(execFileSync(process.execPath, [self, '--child', b, OTHER], { encoding: 'utf8' })),
);
// sideBySide takes medians of numbers: redo them per size and field.
const med = (bi, size, field) => median(perSize.times[bi].map((r) => r[size][field]));
console.log(
  baseline
    ? `| size | libc | guarded, this build | / libc | guarded, baseline (${baseline}) | this / baseline |`
    : '| size | libc | guarded, this build | / libc |',
);
console.log(baseline ? '|---|---|---|---|---|---|' : '|---|---|---|---|');
for (const [size, label] of SIZES) {
  const libc = med(0, size, 'libc');
  const g = med(0, size, 'guarded');
  let row = `| ${label} | ${fmt(libc)} | ${fmt(g)} | ${(g / libc).toFixed(0)}x |`;
  if (baseline) {
    const b = med(1, size, 'guarded');
    row += ` ${fmt(b)} | ${(g / b).toFixed(2)}x |`;
  }
  console.log(row);
}
console.log('');

// 3. The kernel's share: what opening, first touching and closing one
// one-page slot costs here, outside Node.
const cc = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0);
if (cc) {
  const exe = path.join(dir, 'slot-cycle');
  execFileSync(cc, ['-O2', path.join(here, 'native', 'slot-cycle.c'), '-o', exe]);
  const lines = execFileSync(exe, { encoding: 'utf8' }).trim().split('\n');
  const last = lines.filter((l) => l.startsWith('per slot')).pop() ?? '';
  const lastKept = lines.filter((l) => l.startsWith('kept slot')).pop() ?? '';
  console.log('kernel cost per one-page slot (bench/native/slot-cycle.c, last of 3 rounds):');
  console.log(`  guard markers: ${last}`);
  console.log(`  ${lastKept}`);
  // A native free closes its slot at once (a stale use right after the free
  // must fault). One-page native allocations use kept slots: the floor of
  // one guarded malloc+free is their close + open; with guard markers it
  // would be opening (in batches) + first touch + one madvise per free.
  const num = (re, line) => Number(re.exec(line)?.[1] ?? NaN);
  const open = num(/open (\d+)/, last),
    touch = num(/fill (\d+)/, last),
    once = num(/one madvise each: (\d+)/, last);
  const keptClose = num(/close (\d+)/, lastKept),
    keptOpen = num(/open (\d+)/, lastKept);
  const g64 = med(0, 64, 'guarded');
  if ([open, touch, once, keptClose, keptOpen].every(Number.isFinite)) {
    const floor = keptClose + keptOpen;
    console.log(
      `  => with guard markers a 64 B malloc+free could not go below ${fmt(open + touch + once)} (open ${open} + first touch ${touch} + close ${once} ns)`,
    );
    console.log(
      `  => kernel floor of a 64 B malloc+free on a kept slot: ${fmt(floor)} (close ${keptClose} + open ${keptOpen} ns);`,
    );
    if (g64 > floor) {
      console.log(
        `     measured ${fmt(g64)}: ${fmt(g64 - floor)} (${((100 * (g64 - floor)) / g64).toFixed(0)}%) above it is user-space work (stacks, locks, bookkeeping) and cross-CPU TLB flushes`,
      );
    } else {
      console.log(
        `     measured ${fmt(g64)}, below that floor: the machine was too busy while the kernel figures were taken (rerun when quieter)`,
      );
    }
  }
  console.log('');
} else {
  console.log('(no C compiler: kernel cost per slot not measured)\n');
}

// 4. The suite, plain vs every allocation of the addon guarded.
const MATE = (core) => path.join(core, 'bin', 'mate.js');
const suiteVariants = { plain: [process.execPath, SUITE] };
// guard-run without --native: its fixed cost (a second process, install) and
// the JS side, so that the native heap's own share can be read off.
suiteVariants['guard-run, JS buffers only'] = [
  process.execPath,
  MATE(CORE),
  'guard-run',
  '--',
  process.execPath,
  SUITE,
];
suiteVariants['guarded, this build'] = [
  process.execPath,
  MATE(CORE),
  'guard-run',
  '--native',
  '*buggy_addon.node',
  '--',
  process.execPath,
  SUITE,
];
// The addon not chosen (the glob names a module the suite never loads): its
// mallocs stay libc's, its frees pass the process-wide free router.
const UNCHOSEN = 'guard-run --native, addon not chosen';
suiteVariants[UNCHOSEN] = [
  process.execPath,
  MATE(CORE),
  'guard-run',
  '--native',
  '*not_loaded_addon.node',
  '--',
  process.execPath,
  SUITE,
];
if (baseline)
  suiteVariants['guarded, baseline'] = [
    process.execPath,
    MATE(path.resolve(baseline)),
    'guard-run',
    '--native',
    '*buggy_addon.node',
    '--',
    process.execPath,
    SUITE,
  ];
const timeBin = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
function suiteOnce(name) {
  const cmd = suiteVariants[name];
  const core = name.includes('baseline') ? path.resolve(baseline) : CORE;
  const env = {
    ...process.env,
    NATIVE_SUITE_TESTS: String(suiteTests),
    MATE_STATS_CORE: core,
    NODE_OPTIONS: `--require ${JSON.stringify(STATS)}`,
  };
  // CPU time (user + system, the whole process tree) beside wall time: on
  // a machine shared with other work it moves far less than wall time.
  const full = timeBin ? [timeBin, '-f', 'maxrss-kb %M cpu-s %U %S', ...cmd] : cmd;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(full[0], full.slice(1), { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const out = r.stdout + r.stderr;
  const pass = Number(/^# pass (\d+)/m.exec(out)?.[1] ?? 0);
  const fail = Number(/^# fail (\d+)/m.exec(out)?.[1] ?? -1);
  if (r.status !== 0 || pass !== suiteTests || fail !== 0)
    throw new Error(`suite "${name}" failed (exit ${r.status}):\n${out.slice(-2000)}`);
  const stats = /\[native-stats\] (.+)/.exec(out);
  const rss = Number(/maxrss-kb (\d+)/.exec(out)?.[1] ?? 0);
  const cpuMatch = /cpu-s ([\d.]+) ([\d.]+)/.exec(out);
  const cpu = cpuMatch ? 1000 * (Number(cpuMatch[1]) + Number(cpuMatch[2])) : 0;
  const native = stats ? JSON.parse(stats[1]).native : 0;
  if (name === UNCHOSEN && native !== 0)
    throw new Error(`suite "${name}" guarded ${native} allocations of a module not chosen`);
  return { ms, native, rss, cpu };
}
const names = Object.keys(suiteVariants);
const runs = Object.fromEntries(names.map((n) => [n, []]));
suiteOnce('plain'); // warm the file cache
for (let i = 0; i < suiteReps; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + i) % names.length];
    runs[name].push(suiteOnce(name));
  }
}
const base = median(runs.plain.map((r) => r.ms));
const jsOnly = median(runs['guard-run, JS buffers only'].map((r) => r.ms));
const baseCpu = median(runs.plain.map((r) => r.cpu));
const jsOnlyCpu = median(runs['guard-run, JS buffers only'].map((r) => r.cpu));
const baseRss = median(runs.plain.map((r) => r.rss));
console.log(
  `suite: ${path.relative(process.cwd(), SUITE)}, ${suiteTests} tests, ${suiteReps} repetitions, medians of the whole process tree's wall and CPU time`,
);
console.log(
  '| variant | wall | ratio | / guard-run JS only | CPU (user+sys) | ratio | / guard-run JS only | guarded native allocations | peak RSS | RSS ratio |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const name of names) {
  const rs = runs[name];
  const ms = median(rs.map((r) => r.ms));
  const rss = median(rs.map((r) => r.rss));
  const native =
    name === 'plain' || name.includes('JS buffers') || name === UNCHOSEN
      ? '-'
      : String(median(rs.map((r) => r.native)));
  const rssCell = rss ? `${(rss / 1024).toFixed(0)} MiB` : '-';
  const rssRatio = rss && baseRss ? `${(rss / baseRss).toFixed(2)}x` : '-';
  const vsJs = name === 'plain' ? '-' : `${(ms / jsOnly).toFixed(2)}x`;
  const cpu = median(rs.map((r) => r.cpu));
  const cpuCells =
    cpu && baseCpu
      ? `${cpu.toFixed(0)} ms | ${(cpu / baseCpu).toFixed(2)}x | ${name === 'plain' ? '-' : `${(cpu / jsOnlyCpu).toFixed(2)}x`}`
      : '- | - | -';
  console.log(
    `| ${name} | ${ms.toFixed(0)} ms | ${(ms / base).toFixed(2)}x | ${vsJs} | ${cpuCells} | ${native} | ${rssCell} | ${rssRatio} |`,
  );
}
fs.rmSync(dir, { recursive: true, force: true });
