// node-sqlite3's own Mocha suite (171 tests, SQLite compiled into the
// addon) with the addon's native heap guarded: plain, guard-run with JS
// buffers only (its fixed cost), the whole native heap guarded, and
// site-aware sampling (nativeSampleRate N, every call site's first
// nativeSiteFirst calls guarded) at each rate given. Side by side in one
// run, order rotated each repetition; medians of wall time, CPU time
// (user + sys of the whole process tree) and peak RSS (the largest
// process). Every run must pass all tests; a sampled run must say that
// every call site was covered.
//
//   node bench/sqlite3-suite.mjs --dir <node-sqlite3 checkout> [--reps 3] [--rates 100,1000] [--plain-sampling]
//     [--close mprotect,markers,auto]   (the fully guarded row once per way of
//     closing a freed kept slot, MATE_GUARD_KEPT_CLOSE; with the share closed by markers)
//   (or SQLITE3_DIR=<checkout>)
//
// The checkout: node-sqlite3's source with its test/ folder, its addon
// built from source (bench/README.md says how, online or offline). Nothing
// of it is kept in this repository.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { runToFile } from './lib/run-to-file.mjs';
import { median } from './lib/side-by-side.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MATE = path.join(here, '..', 'packages', 'core-native', 'bin', 'mate.js');
const STATS = path.join(here, 'lib', 'print-native-stats.cjs');
const GLOB = '*node_sqlite3.node';

const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : def;
};
const dir = path.resolve(arg('dir', process.env.SQLITE3_DIR ?? ''));
const reps = Number(arg('reps', 3));
const rates = String(arg('rates', '100,1000')).split(',').filter(Boolean).map(Number);
const plainSampling = argv.includes('--plain-sampling');
const closes = String(arg('close', '')).split(',').filter(Boolean);
const usage =
  'usage: node bench/sqlite3-suite.mjs --dir <node-sqlite3 checkout, addon built, test/ present> [--reps N] [--rates 100,1000] [--plain-sampling] [--close mprotect,markers,auto]';
if (closes.some((c) => !['mprotect', 'markers', 'auto'].includes(c))) {
  console.error(`${usage}
--close: ${JSON.stringify(closes.join(','))}: each one of mprotect, markers, auto`);
  process.exit(2);
}
const addon = path.join(dir, 'build', 'Release', 'node_sqlite3.node');
if (!fs.existsSync(addon) || !fs.existsSync(path.join(dir, 'test', 'support', 'helper.js'))) {
  console.error(
    `${usage}\n${dir}: needs build/Release/node_sqlite3.node (built from source) and test/ (bench/README.md says how to get both)`,
  );
  process.exit(2);
}
if (!Number.isInteger(reps) || reps < 1 || rates.some((r) => !Number.isInteger(r) || r < 2)) {
  console.error(`${usage}\n--reps: an integer from 1; --rates: integers from 2, comma-separated`);
  process.exit(2);
}
if (!fs.existsSync('/usr/bin/time')) {
  console.error('needs /usr/bin/time (GNU time: apt-get install time) for CPU time and peak RSS');
  process.exit(2);
}

const mochaBin = [
  path.join(dir, 'node_modules', 'mocha', 'bin', 'mocha.js'),
  path.join(here, '..', 'node_modules', 'mocha', 'bin', 'mocha.js'),
].find((f) => fs.existsSync(f));
const suite = [process.execPath, mochaBin, '-R', 'dot', '--timeout', '480000'];
const guardRun = (...flags) => [process.execPath, MATE, 'guard-run', ...flags, '--', ...suite];
const VARIANTS = {
  plain: suite,
  'guard-run, JS buffers only': guardRun(),
  'native heap, all guarded': guardRun('--native', GLOB),
};
// Environment of a variant beyond the bench's own (MATE_* are cleared).
const VARIANT_ENV = {};
for (const c of closes) {
  VARIANTS[`native heap, all guarded, kept close ${c}`] = guardRun('--native', GLOB);
  VARIANT_ENV[`native heap, all guarded, kept close ${c}`] = { MATE_GUARD_KEPT_CLOSE: c };
}
for (const rate of rates) {
  VARIANTS[`native, 1 in ${rate}, site-aware (first 8)`] = guardRun(
    '--native',
    GLOB,
    '--native-sample-rate',
    String(rate),
  );
  if (plainSampling)
    VARIANTS[`native, 1 in ${rate}, plain sampling`] = guardRun(
      '--native',
      GLOB,
      '--native-sample-rate',
      String(rate),
      '--native-site-first',
      '0',
    );
}

// The suite's database (test/support/createdb.js, as `npm test` does first).
if (!fs.existsSync(path.join(dir, 'test', 'support', 'big.db'))) {
  const r = spawnSync(process.execPath, [path.join(dir, 'test', 'support', 'createdb.js')], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(1);
}

// Output to a file, not a pipe: nothing the suite leaves behind holds the run open.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-sqlite3-suite-'));
const outFile = path.join(tmp, 'out.txt');

function once(name) {
  const cmd = ['/usr/bin/time', '-f', 'mate-bench-time maxrss-kb %M cpu-s %U %S', ...VARIANTS[name]];
  const env = { ...process.env, NODE_OPTIONS: `--require ${JSON.stringify(STATS)}` };
  for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];
  Object.assign(env, VARIANT_ENV[name] ?? {});
  const { status, ms, out } = runToFile(cmd, { cwd: dir, env, outFile });
  const passing = Number(/(\d+) passing/.exec(out)?.[1] ?? 0);
  const failing = Number(/(\d+) failing/.exec(out)?.[1] ?? 0);
  if (status !== 0 || passing === 0 || failing !== 0)
    throw new Error(`"${name}" failed (exit ${status}, ${passing} passing, ${failing} failing):\n${out.slice(-3000)}`);
  const cpu = /cpu-s ([\d.]+) ([\d.]+)/.exec(out);
  let guarded = 0,
    unguarded = 0,
    keptMarkers = 0,
    keptMprotect = 0;
  for (const m of out.matchAll(/\[native-stats\] (.+)/g)) {
    const s = JSON.parse(m[1]);
    guarded += s.native;
    unguarded += s.unguarded;
    keptMarkers += s.keptMarkers ?? 0;
    keptMprotect += s.keptMprotect ?? 0;
  }
  const sites = /^\[mate-guard\] native heap: (\d+) call sites?, (.+)$/m.exec(out);
  if (name.includes('site-aware') && (!sites || !/^all (guarded|covered)/.test(sites[2])))
    throw new Error(`"${name}": not every call site was covered:\n${sites?.[0] ?? out.slice(-3000)}`);
  return {
    ms,
    passing,
    guarded,
    unguarded,
    markerShare: keptMarkers + keptMprotect > 0 ? keptMarkers / (keptMarkers + keptMprotect) : NaN,
    user: 1000 * Number(cpu?.[1] ?? NaN),
    sys: 1000 * Number(cpu?.[2] ?? NaN),
    rss: Number(/maxrss-kb (\d+)/.exec(out)?.[1] ?? NaN),
    sites: sites ? `${sites[1]}: ${sites[2]}` : '',
  };
}

const names = Object.keys(VARIANTS);
const runs = Object.fromEntries(names.map((n) => [n, []]));
once('plain'); // the file cache
for (let i = 0; i < reps; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + i) % names.length];
    runs[name].push(once(name));
    process.stderr.write('.');
  }
}
process.stderr.write('\n');

const med = (name, f) => median(runs[name].map(f));
const base = {
  ms: med('plain', (r) => r.ms),
  cpu: med('plain', (r) => r.user + r.sys),
  rss: med('plain', (r) => r.rss),
};
console.log(
  `node-sqlite3's suite in ${dir}, node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${reps} repetitions, medians`,
);
console.log(
  '| variant | tests passing | wall | ratio | CPU user+sys (user / sys) | ratio | peak RSS | ratio | native allocations guarded / to libc | kept closes by markers | call sites |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const name of names) {
  const ms = med(name, (r) => r.ms);
  const cpu = med(name, (r) => r.user + r.sys);
  const rss = med(name, (r) => r.rss);
  const native = name.startsWith('native') ? `${med(name, (r) => r.guarded)} / ${med(name, (r) => r.unguarded)}` : '-';
  const last = runs[name][runs[name].length - 1];
  const share = med(name, (r) => r.markerShare);
  const markers = Number.isNaN(share) ? '-' : `${(100 * share).toFixed(0)}%`;
  console.log(
    `| ${name} | ${runs[name].map((r) => r.passing).join('/')} | ${(ms / 1000).toFixed(2)} s | ${(ms / base.ms).toFixed(2)}x | ` +
      `${(cpu / 1000).toFixed(2)} s (${(med(name, (r) => r.user) / 1000).toFixed(2)} / ${(med(name, (r) => r.sys) / 1000).toFixed(2)}) | ${(cpu / base.cpu).toFixed(2)}x | ` +
      `${(rss / 1024).toFixed(0)} MiB | ${(rss / base.rss).toFixed(2)}x | ${native} | ${markers} | ${last.sites || '-'} |`,
  );
}
fs.rmSync(tmp, { recursive: true, force: true });
