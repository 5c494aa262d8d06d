// The Python package's own pytest suite (packages/python/tests: settings,
// markers, skips, xdist aggregation, continuation after a lost CUDA
// context, the launch-blocking rerun, exit status, install rules), over the
// simulated CUDA driver, run by python3 -m pytest as its developers run it;
// and the npm core's copy of the PyTorch hook is its one source's.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { noPython, PYTHON_PKG } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';

const CORE = path.join(ROOT, 'packages', 'core-native');

test("the Python package's pytest suite passes over the simulated driver, with no deprecation warning from pytest", {
  skip: noPython(),
  timeout: 600_000,
}, async () => {
  const fake = path.join(CORE, 'build', 'Release', 'libmate_guard_fake_cuda.so');
  // Without the npm build's simulated driver the suite builds one with g++ (or skips, saying so).
  const env = fs.existsSync(fake)
    ? { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake, COLUMNS: '200' }
    : { COLUMNS: '200' };
  const r = await run(
    'python3',
    [
      '-m',
      'pytest',
      '-p',
      'no:cacheprovider',
      '-q',
      '-rfEs',
      '-W',
      'error::pytest.PytestRemovedIn10Warning',
      path.join(PYTHON_PKG, 'tests'),
    ],
    { cwd: ROOT, env, timeout: 590_000 },
  );
  assert.equal(r.code, 0, r.output);
  const passed = Number(/(\d+) passed/.exec(r.stdout)?.[1] ?? 0);
  assert.ok(passed >= 20, r.output);
  assert.doesNotMatch(r.stdout, /\d+ (failed|error)/, r.output);
  // A skip says why (xdist missing here): never silent.
  for (const line of r.stdout.split('\n').filter((l) => l.startsWith('SKIPPED'))) assert.match(line, /: \S.+/, line);
});

test("the npm core ships python/ as copies of the Python package's hook and sitecustomize, made at build time", () => {
  for (const [copy, source] of [
    ['mate_guard_cuda.py', ['mate_guard', '_torch_hook.py']],
    ['sitecustomize.py', ['guard-run', 'sitecustomize.py']],
  ]) {
    assert.equal(
      fs.readFileSync(path.join(CORE, 'python', copy), 'utf8'),
      fs.readFileSync(path.join(PYTHON_PKG, ...source), 'utf8'),
      copy,
    );
  }
  const tracked = fs.readFileSync(path.join(ROOT, '.gitignore'), 'utf8');
  assert.match(tracked, /^\/packages\/core-native\/python\/$/m, 'the copies are not a second source in git');
});
