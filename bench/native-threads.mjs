// Native heap guarding with several allocating threads: the cost of one
// guarded 64 B malloc+free when 1, 2, 4 or 8 of the addon's own threads
// allocate at once (examples/addon `nativeHeap.churnThreads`), per
// malloc+free of one thread (wall) and in CPU time of the whole process
// (user and system apart: each close at a free is a protection downgrade
// whose TLB flush reaches every CPU the process runs on), for this build
// and, with --baseline, another build of core (e.g. main's), in
// alternating processes, medians. --close runs each build once per way of
// closing a freed kept slot (MATE_GUARD_KEPT_CLOSE set per child: mprotect,
// markers, auto), side by side; the table says what share of the closes
// were markers.
// Run: node bench/native-threads.mjs [--reps 5] [--ops 20000] [--size 64]
//        [--threads 1,2,4,8] [--close mprotect,markers,auto]
//        [--baseline <core-native package dir of another build>]
import { execFileSync } from 'node:child_process';
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
const reps = Number(arg('reps', 5));
const ops = Number(arg('ops', 20000));
const size = Number(arg('size', 64));
const threadCounts = String(arg('threads', '1,2,4,8')).split(',').map(Number);
const baseline = arg('baseline', '');
const closes = arg('close', '') ? String(arg('close', '')).split(',') : [''];
for (const c of closes)
  if (!['', 'mprotect', 'markers', 'auto'].includes(c))
    throw new Error(`--close: ${JSON.stringify(c)} is not one of mprotect, markers, auto`);
const ADDON = path.join(here, '..', 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');
const CORE = path.join(here, '..', 'packages', 'core-native');
const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  // A core package dir and a thread count: per malloc+free, one thread's
  // wall time and the process's user and system CPU time.
  const [, , , core, threadsArg] = process.argv;
  const threads = Number(threadsArg);
  const guard = require(core);
  guard.installGuardAllocator({ nativeModules: ['*buggy_addon.node'] });
  const addon = require(ADDON);
  addon.nativeHeap.churnThreads(threads, 9000, size); // makes the kept slots, warms
  const s0 = guard.stats();
  const before = s0.nativeAllocations;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  addon.nativeHeap.churnThreads(threads, ops, size);
  const wall = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  const s1 = guard.stats();
  const guarded = s1.nativeAllocations - before;
  if (guarded < threads * ops) throw new Error(`only ${guarded} of ${threads * ops} allocations were guarded`);
  const pairs = threads * ops;
  // Share of the timed part's kept-slot closes made by guard markers (a
  // build without the counters: null).
  const markers = (s1.nativeKeptMarkerCloses ?? NaN) - (s0.nativeKeptMarkerCloses ?? NaN);
  const kept = markers + (s1.nativeKeptMprotectCloses ?? NaN) - (s0.nativeKeptMprotectCloses ?? NaN);
  const markerShare = Number.isFinite(kept) && kept > 0 ? markers / kept : null;
  process.stdout.write(
    JSON.stringify({
      wall: wall / ops,
      user: (cpu.user * 1000) / pairs,
      sys: (cpu.system * 1000) / pairs,
      markerShare,
    }),
  );
  process.exit(0);
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} us` : `${ns.toFixed(0)} ns`);
console.log(
  `mate-guard native heap, allocating threads: node ${process.version}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `${size} B malloc+free, ${ops} pairs per thread, ${reps} repetitions, medians; native stacks on (the default)`,
);
console.log('');
const builds = baseline
  ? [
      ['this build', CORE],
      ['baseline', path.resolve(baseline)],
    ]
  : [['this build', CORE]];
const variants = [];
for (const n of threadCounts)
  for (const [name, dir] of builds) for (const close of closes) variants.push({ n, name, dir, close });
const childEnv = (close) => {
  const env = { ...process.env };
  if (close) env.MATE_GUARD_KEPT_CLOSE = close;
  return env;
};
const res = await sideBySide(variants, reps, (v) =>
  JSON.parse(
    execFileSync(process.execPath, [self, '--child', v.dir, String(v.n)], { encoding: 'utf8', env: childEnv(v.close) }),
  ),
);
const med = (i, field) => median(res.times[i].map((r) => r[field]));
const share = (i) => {
  const s = res.times[i].map((r) => r.markerShare).filter((x) => x !== null && x !== undefined);
  return s.length ? `${(100 * median(s)).toFixed(0)}%` : '-';
};
console.log(
  '| threads | build | kept close | markers | wall per malloc+free, one thread | CPU per malloc+free (user + sys) | user | sys |',
);
console.log('|---|---|---|---|---|---|---|---|');
variants.forEach((v, i) => {
  const user = med(i, 'user'),
    sys = med(i, 'sys');
  console.log(
    `| ${v.n} | ${v.name} | ${v.close || process.env.MATE_GUARD_KEPT_CLOSE || 'default'} | ${share(i)} | ${fmt(med(i, 'wall'))} | ${fmt(user + sys)} | ${fmt(user)} | ${fmt(sys)} |`,
  );
});
if (os.cpus().length < Math.max(...threadCounts)) {
  console.log('');
  console.log(
    `(${os.cpus().length} CPUs: above that many threads, they take turns; wall per thread then grows with the count)`,
  );
}
