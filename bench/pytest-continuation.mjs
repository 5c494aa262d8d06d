// What the pytest plugin's continuation log costs a suite of many small
// tests: a plain pytest run logs each test's start and reports (pytest's
// serialization, one JSON line each) so that a fault on guarded host memory
// can be continued by the process that takes its place. A generated suite
// of N tests that each make a small numpy array, run by `pytest
// --guard-alloc` with the log (default) and without it (the tuning variable
// MATE_PYTEST_NO_CONTINUATION=1), and by pytest without the guard; variants
// alternating, whole-process seconds, medians of the repetitions.
// Run: node bench/pytest-continuation.mjs [--reps 7] [--tests 2000]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './lib/side-by-side.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const reps = arg('reps', 7);
const tests = arg('tests', 2000);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-bench-continuation-'));
fs.writeFileSync(
  path.join(dir, 'test_many.py'),
  `import numpy as np\nimport pytest\n\n\n@pytest.mark.parametrize('i', range(${tests}))\ndef test_small(i):\n    assert np.ones(4).sum() == 4\n`,
);

const variants = {
  plain: { args: [], env: {} },
  guard: { args: ['--guard-alloc', '--no-guard-rerun'], env: {} },
  'guard, no continuation log': {
    args: ['--guard-alloc', '--no-guard-rerun'],
    env: { MATE_PYTEST_NO_CONTINUATION: '1' },
  },
};
const env = {
  ...process.env,
  PYTHONPATH: path.join(root, 'packages', 'python'),
  MATE_GUARD_CUDA_DRIVER: path.join(dir, 'no-libcuda.so.1'), // host memory only, on a GPU machine too
};
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < reps; r++) {
  for (const [name, v] of Object.entries(variants)) {
    const start = process.hrtime.bigint();
    const p = spawnSync(
      'python3',
      ['-m', 'pytest', '-p', 'mate_guard.pytest_plugin', '-p', 'no:cacheprovider', '-q', ...v.args],
      { cwd: dir, env: { ...env, ...v.env }, encoding: 'utf8' },
    );
    const s = Number(process.hrtime.bigint() - start) / 1e9;
    if (p.status !== 0) throw new Error(`${name}: exit ${p.status}\n${p.stdout}${p.stderr}`);
    times[name].push(s);
  }
}
fs.rmSync(dir, { recursive: true, force: true });
const base = median(times['guard, no continuation log']);
console.log(`${tests} tests, ${reps} rounds, whole pytest process (s); ratio to the guard without the log`);
for (const [name, t] of Object.entries(times)) {
  const m = median(t);
  console.log(
    `${name.padEnd(28)} ${t.map((x) => x.toFixed(2)).join(' ')}  median ${m.toFixed(3)}  ${(m / base).toFixed(3)}x  ` +
      `${((m * 1e6) / tests).toFixed(0)} us/test`,
  );
}
