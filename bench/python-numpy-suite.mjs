// numpy's own tests under pytest, plain and with numpy arrays guarded
// (`pytest --guard-alloc`: the guard's NEP 49 handler), the package from
// this checkout: wall time of the whole command, variants alternating,
// medians; CPU time too (user + system of the whole command, through
// /usr/bin/time where it is installed): on a machine loaded by others the
// wall time carries their load, the CPU time far less of it. Also
// passed/failed counts and guarded array allocations.
//   node bench/python-numpy-suite.mjs [--reps 3] [--tests 'numpy._core.tests.test_indexing ...'] [--k 'not huge_list']
//     [--native '<glob>']   (adds a variant with that extension's native heap guarded too)
// e.g. scipy.ndimage's filters with its C extension's heap:
//   node bench/python-numpy-suite.mjs --tests scipy.ndimage.tests.test_filters --k '' --native '*_nd_image*.so'
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { runToFile } from './lib/run-to-file.mjs';
import { median } from './lib/side-by-side.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const PKG = path.join(here, '..', 'packages', 'python');
const argv = process.argv.slice(2);
const arg = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : def;
};
const reps = Number(arg('reps', 3));
// Indexing, take/put/choose and stacking: array-making code paths, a few
// minutes plain. test_huge_list_error spends 70 s building a huge list
// (no arrays): left out of both variants.
const tests = arg(
  'tests',
  'numpy._core.tests.test_indexing numpy._core.tests.test_item_selection numpy._core.tests.test_shape_base',
).split(/\s+/);
const k = arg('k', 'not huge_list');
const native = arg('native');
const base = [
  'python3',
  '-m',
  'pytest',
  '-q',
  '-p',
  'no:cacheprovider',
  '-p',
  'mate_guard.pytest_plugin',
  ...(k ? ['-k', k] : []),
  '--pyargs',
  ...tests,
];
const VARIANTS = {
  plain: base,
  '--guard-alloc': [...base, '--guard-alloc'],
  '--guard-alloc --no-guard-capture-stacks': [...base, '--guard-alloc', '--no-guard-capture-stacks'],
  ...(native
    ? { [`--guard-alloc --guard-native ${native}`]: [...base, '--guard-alloc', '--guard-native', native] }
    : {}),
};
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-numpy-suite-'));
const outFile = path.join(cwd, 'out.txt');
const env = { ...process.env, PYTHONPATH: PKG, MATE_PYTEST_GUARD_REPORT_DIR: path.join(cwd, 'reports') };
for (const key of Object.keys(env))
  if (key.startsWith('MATE_PYTEST_GUARD_') && key !== 'MATE_PYTEST_GUARD_REPORT_DIR') delete env[key];

const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const cpuFile = path.join(cwd, 'cpu.txt');

function once(cmd) {
  const { status, ms, out } = runToFile(TIME ? [TIME, '-f', '%U %S', '-o', cpuFile, ...cmd] : cmd, {
    cwd,
    env,
    outFile,
  });
  const count = (re) => Number(re.exec(out)?.[1] ?? 0);
  const [user, sys] = TIME
    ? fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
    : [NaN, NaN];
  return {
    ms,
    cpuMs: (user + sys) * 1000,
    status,
    passed: count(/(\d+) passed/),
    failed: count(/(\d+) failed/),
    guarded: count(/numpy arrays: guarded, (\d+) allocations/),
    native: count(/native heap of [^:]+: (\d+) allocations/),
    violations: count(/(\d+) violations?,/),
  };
}

const names = Object.keys(VARIANTS);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < reps; i++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(j + i) % names.length];
    runs[name].push(once(VARIANTS[name]));
  }
}
const plain = median(runs.plain.map((r) => r.ms));
const plainCpu = median(runs.plain.map((r) => r.cpuMs));
console.log(`pytest${k ? ` -k '${k}'` : ''} --pyargs ${tests.join(' ')}, ${reps} repetitions, median wall time`);
console.log(
  '| variant | wall | ratio | CPU | CPU ratio | passed (each run) | failed (each run) | guarded array allocations | guarded native allocations | violations |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const name of names) {
  const rs = runs[name];
  const ms = median(rs.map((r) => r.ms));
  const cpu = median(rs.map((r) => r.cpuMs));
  console.log(
    `| ${name} | ${(ms / 1000).toFixed(2)} s | ${(ms / plain).toFixed(2)}x | ${(cpu / 1000).toFixed(2)} s | ${(cpu / plainCpu).toFixed(2)}x | ${rs.map((r) => r.passed).join('/')} | ${rs.map((r) => r.failed).join('/')} | ${name === 'plain' ? '-' : median(rs.map((r) => r.guarded))} | ${name.includes('native') ? median(rs.map((r) => r.native)) : '-'} | ${name === 'plain' ? '-' : median(rs.map((r) => r.violations))} |`,
  );
}
