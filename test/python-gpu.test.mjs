// pytest --guard-alloc on a real GPU with PyTorch and Triton, from the
// installed wheel: a Triton overrun fails the test that made it, with the
// report naming it; the graph-capture test is skipped with the reason;
// torch.compile and the clean tests pass. Without torch or a GPU it skips,
// saying why in one line.
import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildWheel, freshVenv, noPython, project } from './helpers/python.mjs';
import { pythonMissing, noTorchGpu } from './helpers/python-modules.mjs';
import { ROOT, run } from './helpers/run.mjs';

function gpuSkip() {
  return noPython() || noTorchGpu();
}

const xdistSkip = () => pythonMissing(['xdist'], 'no pytest-xdist');

const SUITE = path.join(ROOT, 'test', 'fixtures', 'python', 'gpu', 'test_gpu_suite.py');
const REASON = 'guard allocator debug mode does not support graph capture';

describe('pytest --guard-alloc on a GPU (PyTorch, Triton, torch.compile)', { skip: gpuSkip() }, () => {
  let python;
  before(() => {
    python = freshVenv('mate-py-gpu-', ['--no-index', buildWheel(os.tmpdir())]);
  });
  const pytest = (args) =>
    run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfs', ...args, 'test_gpu_suite.py'], {
      cwd: project('mate-py-gpu-project-', { 'test_gpu_suite.py': SUITE }),
      timeout: 300_000,
    });

  test('a Triton overrun fails that test with the report naming it; graph capture skipped; torch.compile and the rest pass', {
    timeout: 320_000,
  }, async () => {
    const r = await pytest(['--guard-alloc']);
    assert.equal(r.code, 1, r.output);
    const failure = r.stdout.split(/_+ test_triton_overrun _+/)[1];
    assert.ok(failure, r.output);
    // The full report (the native formatter's, through the wheel's library): never a pointer to a Node CLI.
    assert.match(
      failure,
      /==mate-guard== ERROR: canary-corruption: \d+ bytes? past the end of allocation #\d+ \(4004 bytes, tail mode\) damaged\n/,
    );
    assert.match(failure, /==mate-guard== allocated at:\n==mate-guard== {3}at /);
    assert.match(failure, /==mate-guard== hint: /);
    assert.doesNotMatch(r.output, /printer could not run|render it with `mate report/);
    assert.match(failure, /==mate-guard== test: test_gpu_suite\.py::test_triton_overrun/);
    assert.match(r.stdout, new RegExp(`SKIPPED \\[1\\] test_gpu_suite\\.py:\\d+: ${REASON}`));
    assert.match(r.stdout, /1 failed, 2 passed, 1 skipped/);
    assert.match(r.stdout, /^\[mate-guard\] summary: \d+ allocations guarded, .*1 violation, 1 test skipped by tag$/m);
  });

  test('a clean suite passes under the guard, exit 0', { timeout: 320_000 }, async () => {
    const r = await pytest(['--guard-alloc', '-k', 'not overrun']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /2 passed, 1 skipped, 1 deselected/);
    assert.match(r.stdout, /^\[mate-guard\] summary: \d+ allocations guarded, .*0 violations/m);
  });

  test('torch.multiprocessing shares a guarded tensor under the Python API (python -m mate_guard): the receiver reads, writes and keeps it', {
    timeout: 320_000,
  }, async () => {
    const r = await run(
      python,
      ['-m', 'mate_guard', path.join(ROOT, 'test', 'fixtures', 'cuda', 'ipc_share.py'), 'share'],
      { cwd: os.tmpdir(), timeout: 300_000 },
    );
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^receiver got 1000 floats on cuda:0, sum 499500$/m);
    assert.match(r.stdout, /^sender sees x\[0\] = 42$/m);
    assert.match(r.stdout, /^receiver after the sender freed it: sum 499542$/m);
    assert.match(r.stdout, /^receiver exit code 0$/m);
    assert.doesNotMatch(r.output, /==mate-guard== ERROR/);
  });

  test('installing after the first CUDA allocation raises, saying so', async () => {
    const r = await run(
      python,
      [
        '-c',
        "import torch, mate_guard\ntorch.zeros(1, device='cuda')\ntry:\n    mate_guard.install_guard_allocator()\nexcept RuntimeError as e:\n    print(e)",
      ],
      { cwd: os.tmpdir() },
    );
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^Guard allocator must be installed before the first CUDA allocation in the process$/m);
  });
});

describe('pytest-xdist --guard-alloc on a GPU: a worker that lost its CUDA context is replaced', {
  skip: gpuSkip() || xdistSkip(),
}, () => {
  test('the faulting test fails with its report; the worker is replaced; the tests after it run and pass', {
    timeout: 320_000,
  }, async () => {
    const python = freshVenv('mate-py-xdist-', ['--no-index', buildWheel(os.tmpdir())]);
    const cwd = project('mate-py-xdist-project-', {
      'test_lost_context.py': path.join(ROOT, 'test', 'fixtures', 'python', 'gpu', 'test_lost_context.py'),
    });
    const r = await run(
      python,
      ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfs', '-n', '1', '--guard-alloc', 'test_lost_context.py'],
      { cwd, timeout: 300_000 },
    );
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /==mate-guard== ERROR: illegal-address/);
    assert.match(
      r.stdout,
      /\[mate-guard\] worker gw0 lost its CUDA context in test_lost_context\.py::test_a_lost_context: it is replaced, and test_lost_context\.py::test_b_runs_after runs on a fresh worker/,
    );
    assert.match(r.stdout, /replacing crashed worker gw0/);
    assert.match(r.stdout, /1 failed, 2 passed/);
  });
});

// The acceptance run on a GPU: a suite with three planted kernel
// bugs (test/fixtures/python/gpu/test_three_bugs.py) reports all three in
// one pytest run and in one pytest -n 4 run, each failure naming its test.
const THREE = path.join(ROOT, 'test', 'fixtures', 'python', 'gpu', 'test_three_bugs.py');

function assertThreeBugs(r) {
  assert.equal(r.code, 1, r.output);
  assert.match(r.stdout, /3 failed, 2 passed/, r.output);
  for (const [name, kind] of [
    ['test_b_overrun', 'canary-corruption'],
    ['test_c_lost_context', 'illegal-address'],
    ['test_d_underrun', 'canary-corruption'],
  ]) {
    assert.match(r.stdout, new RegExp(`^FAILED test_three_bugs\\.py::${name}\\b`, 'm'), `${name}\n${r.output}`);
    // Its failure section (up to the next one, or the summary) names the kind and the test.
    const failure = r.stdout.split(new RegExp(`_+ ${name} _+`))[1]?.split(/\n_{3,} test_|\n=+ short test summary/)[0];
    assert.ok(failure, r.output);
    assert.match(failure, new RegExp(`^==mate-guard== ERROR: ${kind}`, 'm'), `${name}\n${r.output}`);
    assert.match(
      failure,
      new RegExp(`^==mate-guard== test: test_three_bugs\\.py::${name}$`, 'm'),
      `${name}\n${r.output}`,
    );
  }
  const violations = Number(/^\[mate-guard\] summary: .*, (\d+) violations?,/m.exec(r.stdout)?.[1]);
  assert.ok(violations >= 3, r.output);
}

describe('three planted kernel bugs on a GPU: one pytest run and one pytest -n 4 run report all three', {
  skip: gpuSkip(),
}, () => {
  let python;
  before(() => {
    python = freshVenv('mate-py-three-', ['--no-index', buildWheel(os.tmpdir())]);
  });
  const pytest = (args) =>
    run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfs', ...args, '--guard-alloc', 'test_three_bugs.py'], {
      cwd: project('mate-py-three-project-', { 'test_three_bugs.py': THREE }),
      env: { COLUMNS: '400' },
      timeout: 500_000,
    });

  test('pytest: the tests after the lost context run in a fresh process; the fault is rerun with launch blocking', {
    timeout: 520_000,
  }, async () => {
    const r = await pytest([]);
    assertThreeBugs(r);
    assert.match(
      r.stdout,
      /^\[mate-guard\] the CUDA context was lost in test_three_bugs\.py::test_c_lost_context: the 2 tests left run in a fresh process$/m,
    );
    assert.match(r.stdout, /^\[mate-guard\] 2 processes: /m);
    assert.match(
      r.stdout,
      /^\[mate-guard\] launch-blocking rerun: 1 test \(test_three_bugs\.py::test_c_lost_context\), [\d.]+ s$/m,
    );
  });

  test('pytest -n 4: the controller sums the workers; the worker that lost its context is named', {
    skip: xdistSkip(),
    timeout: 520_000,
  }, async () => {
    const r = await pytest(['-n', '4']);
    assertThreeBugs(r);
    assert.match(
      r.stdout,
      /^\[mate-guard\] worker gw\d lost its CUDA context in test_three_bugs\.py::test_c_lost_context( \(replaced by a fresh worker\))?$/m,
    );
  });
});
