// The Python package (packages/python): its pytest plugin and API on the
// real library, without a GPU, over the simulated CUDA driver
// (packages/core-native/test/sim/fake_cuda.cc: device memory is host memory, so a test can
// write past an allocation from Python). The wheel is built and installed
// into a fresh virtual environment first; tests allocate through the C ABI
// (test/fixtures/python/cabi.py), as there is no torch here.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildWheel, freshVenv, noPython, project } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';
import { buildFakeDriver, noGxx } from './helpers/sim.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'python');
const REASON = 'guard allocator debug mode does not support graph capture';

describe('pytest --guard-alloc and the Python API over the simulated driver', { skip: noPython() || noGxx() }, () => {
  let python;
  let simEnv;
  before(() => {
    const fake = buildFakeDriver('mate-sim-py-');
    simEnv = { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake };
    python = freshVenv('mate-py-', ['--no-index', buildWheel(path.dirname(fake))]);
  });

  const files = (extra = {}) => ({
    'cabi.py': path.join(FIX, 'cabi.py'),
    'test_device.py': path.join(FIX, 'project', 'test_device.py'),
    ...extra,
  });
  const pytest = (args, { env = {}, extra } = {}) => {
    const cwd = project('mate-pytest-', files(extra));
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-reports-'));
    return run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfs', ...args], {
      cwd,
      env: { ...simEnv, MATE_PYTEST_GUARD_REPORT_DIR: reports, ...env },
      timeout: 60_000,
    });
  };

  test('an overrun fails the test that made it, with the report naming its node id; the others pass; summary line; exit 1', async () => {
    const r = await pytest(['--guard-alloc', 'test_device.py']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /^test_device\.py \.F\.ss\.s/m);
    const failure = r.stdout.split(/_+ test_overrun _+/)[1];
    assert.ok(failure, r.output);
    // The full report (the one formatter's, through the library's C ABI), never a pointer to a Node CLI.
    assert.match(
      failure,
      /==mate-guard== ERROR: canary-corruption: 1 byte past the end of allocation #2 \(100 bytes, tail mode\) damaged\n/,
    );
    assert.match(failure, /==mate-guard== test: test_device\.py::test_overrun\n/);
    assert.match(failure, /==mate-guard== damaged: 1 byte, 1 byte past the end\n/);
    assert.match(failure, /==mate-guard== hint: the write landed in the alignment gap/);
    assert.doesNotMatch(r.output, /printer could not run|render it with `mate report/);
    assert.match(
      failure,
      /allocated at:\n==mate-guard== {3}at alloc \(.*cabi\.py:\d+\)\n==mate-guard== {3}at test_overrun \(.*test_device\.py:13\)\n/,
    );
    assert.match(r.stdout, /^FAILED test_device\.py::test_overrun - ==mate-guard== ERROR: canary-corruption/m);
    assert.doesNotMatch(r.stdout, /FAILED test_device\.py::test_(clean|after_overrun)/);
    assert.match(
      r.stdout,
      /^\[mate-guard\] summary: 4 allocations guarded, peak live 1, 0 unguarded fallbacks, 1 violation, 3 tests skipped by tag$/m,
    );
  });

  test('graph-capture tests, guard_incompatible tests and use_graph=True cases are skipped with the reason; off, they run and nothing is guarded', async () => {
    const r = await pytest(['--guard-alloc', '--strict-markers', '-k', 'graph or incompatible']);
    assert.equal(r.code, 0, r.output);
    assert.equal(
      (r.stdout.match(new RegExp(`^SKIPPED \\[1\\] test_device\\.py:\\d+: ${REASON}$`, 'gm')) ?? []).length,
      3,
      r.output,
    );
    assert.match(r.stdout, /1 passed, 3 skipped/);
    const off = await pytest(['--strict-markers', '-k', 'graph or incompatible']);
    assert.equal(off.code, 0, off.output);
    assert.match(off.stdout, /4 passed/);
    assert.doesNotMatch(off.output, /\[mate-guard\]|==mate-guard==/);
  });

  // The mode shows in each allocation's log line (--guard-log-allocations).
  const modeOf = (r) => {
    assert.equal(r.code, 0, r.output);
    const modes = [...r.output.matchAll(/\[mate-guard\] alloc #\d+ .*mode=(\w+)/g)].map((m) => m[1]);
    assert.ok(modes.length > 0, r.output);
    return [...new Set(modes)].join(',');
  };
  // -s: the log lines are written while pytest captures the test's output.
  const clean = ['-s', '-k', 'clean'];

  test('flag > MATE_PYTEST_GUARD_* > ini > default, per setting; addopts and PYTEST_ADDOPTS count as flags', async () => {
    const ini = { 'pytest.ini': '[pytest]\nguard_alloc = true\nguard_mode = head\nguard_log_allocations = on\n' };
    assert.equal(modeOf(await pytest(clean, { extra: ini })), 'head', 'ini');
    assert.equal(
      modeOf(await pytest(clean, { extra: ini, env: { MATE_PYTEST_GUARD_MODE: 'tail' } })),
      'tail',
      'env over ini',
    );
    assert.equal(
      modeOf(await pytest(['--guard-mode', 'head', ...clean], { extra: ini, env: { MATE_PYTEST_GUARD_MODE: 'tail' } })),
      'head',
      'flag over env',
    );
    assert.equal(
      modeOf(
        await pytest(clean, {
          env: {
            MATE_PYTEST_GUARD_ALLOC: '1',
            MATE_PYTEST_GUARD_LOG_ALLOCATIONS: 'yes',
            PYTEST_ADDOPTS: '--guard-mode=head',
          },
        }),
      ),
      'head',
      'PYTEST_ADDOPTS',
    );
    assert.equal(
      modeOf(
        await pytest(clean, {
          extra: { 'pytest.ini': '[pytest]\naddopts = --guard-alloc --guard-mode head --guard-log-allocations\n' },
        }),
      ),
      'head',
      'addopts',
    );
    const no = await pytest(['--no-guard-alloc', ...clean], { env: { MATE_PYTEST_GUARD_ALLOC: '1' } });
    assert.equal(no.code, 0, no.output);
    assert.doesNotMatch(no.output, /\[mate-guard\] summary/, '--no-guard-alloc beats the environment');
  });

  test('a misspelled flag, variable or ini key, or a bad value, stops the session before collection in one line, exit 2 (as every mate-guard entry point)', async () => {
    const cases = [
      [
        ['--guard-alloc', '--guard-mdoe', 'head'],
        {},
        {},
        'mate-guard: unknown option "--guard-mdoe"; did you mean --guard-mode?',
      ],
      [
        ['--guard-alloc'],
        { MATE_PYTEST_GUARD_MDOE: 'head' },
        {},
        'mate-guard: unknown environment variable "MATE_PYTEST_GUARD_MDOE"; did you mean MATE_PYTEST_GUARD_MODE?',
      ],
      [
        ['--guard-alloc'],
        {},
        { 'pytest.ini': '[pytest]\nguard_mdoe = head\n' },
        'mate-guard: unknown ini option "guard_mdoe"; did you mean guard_mode?',
      ],
      [
        ['--guard-alloc', '--guard-mode', 'diagonal'],
        {},
        {},
        'mate-guard: --guard-mode: "diagonal" is not a guard mode; use tail or head',
      ],
      [
        ['--guard-alloc'],
        { MATE_PYTEST_GUARD_ALIGNMENT: '3' },
        {},
        'mate-guard: MATE_PYTEST_GUARD_ALIGNMENT: "3" is not allowed; use a power of two from 1 to 4096',
      ],
    ];
    for (const [args, env, extra, line] of cases) {
      const r = await pytest(args, { env, extra });
      assert.equal(r.code, 2, r.output);
      assert.equal(r.stderr, `${line}\n`);
      assert.doesNotMatch(r.output, /collected|passed|failed/, 'nothing was collected');
    }
  });

  test('a fault that loses the CUDA context fails its test with the report and a launch-blocking rerun of it; the tests after it run in a fresh process; the summary counts both processes', async () => {
    const extra = { 'test_context_loss.py': path.join(FIX, 'project', 'test_context_loss.py') };
    const r = await pytest(['--guard-alloc', 'test_context_loss.py'], { extra });
    assert.equal(r.code, 1, r.output);
    const failure = r.stdout.split(/_+ test_faults _+/)[1];
    assert.ok(failure, r.output);
    assert.match(failure, /==mate-guard== ERROR: illegal-address/);
    assert.match(failure, /==mate-guard== test: test_context_loss\.py::test_faults/);
    assert.match(
      failure,
      /-+ mate-guard: launch-blocking rerun -+\n\[mate-guard\] rerun of test_context_loss\.py::test_faults alone with launch blocking \([\d.]+ s\):\n==mate-guard== ERROR: /,
    );
    assert.match(
      r.stdout,
      /^\[mate-guard\] the CUDA context was lost in test_context_loss\.py::test_faults: the 2 tests left run in a fresh process$/m,
    );
    assert.match(r.stdout, /1 failed, 3 passed/);
    assert.match(
      r.stdout,
      /^\[mate-guard\] 2 processes: the CUDA context was lost in test_context_loss\.py::test_faults; the tests after each ran in a fresh process$/m,
    );
    assert.match(
      r.stdout,
      /^\[mate-guard\] launch-blocking rerun: 1 test \(test_context_loss\.py::test_faults\), [\d.]+ s$/m,
    );
    const off = await pytest(['--guard-alloc', '--no-guard-rerun', 'test_context_loss.py'], { extra });
    assert.equal(off.code, 1, off.output);
    assert.match(off.stdout, /1 failed, 3 passed/);
    assert.doesNotMatch(off.stdout, /launch-blocking rerun/);
  });

  test('the API: bad config values are named; installing twice with the same config is a no-op, with another it raises; check_canaries raises on damage; the process exits 1', async () => {
    const r = await run(python, [path.join(FIX, 'api_rules.py')], {
      cwd: FIX,
      env: { ...simEnv, MATE_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-api-')) },
    });
    assert.equal(r.code, 1, r.output); // the process had a violation: exit_code (default 1)
    assert.match(
      r.stderr,
      /^==mate-guard== 1 violation in this process: exit status 1 \(exit_code; 0 leaves the status alone\)$/m,
    );
    assert.match(r.stdout, /^active before: False None$/m);
    assert.match(r.stdout, /^bad mode: mode: "diagonal" is not a guard mode; use tail or head$/m);
    assert.match(r.stdout, /^same config again: no-op$/m);
    assert.match(r.stdout, /^different config: Guard allocator is already active with a different configuration$/m);
    assert.match(r.stdout, /^reports: \[\('canary-corruption', None\)\]$/m); // check_canaries raised GuardViolationError
    assert.match(r.stdout, /^checked again: \[\]$/m);
    assert.match(r.stdout, /^active: True allocations 1 violations 1$/m);
  });

  test('python -m mate_guard script.py args: the script runs guarded, with its arguments; an overrun is reported and the exit status is --exit-code (default 1, 0: left alone)', async () => {
    const main = (...flags) =>
      run(
        python,
        [
          '-m',
          'mate_guard',
          '--mode',
          'tail',
          '--sync-on-free',
          ...flags,
          path.join(FIX, 'script_overrun.py'),
          'a',
          '--b',
        ],
        {
          cwd: os.tmpdir(),
          env: { ...simEnv, MATE_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-main-')) },
        },
      );
    const r = await main();
    assert.equal(r.code, 1, r.output); // a run with a violation fails, as under a sanitizer
    assert.match(r.stderr, /^==mate-guard== 1 violation in this process: exit status 1 /m);
    assert.equal((await main('--exit-code', '7')).code, 7);
    const off = await main('--exit-code', '0');
    assert.equal(off.code, 0, off.output);
    assert.doesNotMatch(off.stderr, /violation in this process/);
    assert.match(r.stdout, /^argv: \['a', '--b'\] active: True$/m);
    // Printed by the native printer (no Node here): the full report, not the "printer could not run" line.
    assert.match(
      r.stderr,
      /==mate-guard== ERROR: canary-corruption: 1 byte past the end of allocation #1 \(100 bytes, tail mode\) damaged\n/,
    );
    assert.match(r.stderr, /==mate-guard== allocated at:\n==mate-guard== {3}at /);
    assert.doesNotMatch(r.stderr, /printer could not run/);
    const bad = await run(python, ['-m', 'mate_guard', '--mdoe', 'head', 'x.py'], { env: simEnv });
    assert.equal(bad.code, 2, bad.output);
    assert.match(bad.stderr, /^mate_guard: unknown option "--mdoe"; did you mean --mode\?$/m);
  });
});

// The wheel's library built without Node: plain CMake over the core's
// sources, with no node on PATH, then the wheel from it, installed and used.
describe('the Python package builds without Node', { skip: noPython() || noGxx() }, () => {
  test('cmake builds libmate_guard_cuda.so with no node on PATH; the wheel from it installs and guards', async () => {
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-no-node-bin-'));
    for (const t of [
      'cmake',
      'make',
      'c++',
      'g++',
      'gcc',
      'cc',
      'ld',
      'as',
      'ar',
      'ranlib',
      'python3',
      'objdump',
      'strip',
      'sh',
      'uname',
      'ninja',
    ]) {
      const found = ['/usr/local/bin', '/usr/bin', '/bin'].map((d) => path.join(d, t)).find((f) => fs.existsSync(f));
      if (found) fs.symlinkSync(found, path.join(tools, t));
    }
    assert.ok(!fs.existsSync(path.join(tools, 'node')));
    const build = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-no-node-build-'));
    const env = { PATH: tools, HOME: os.tmpdir() };
    const cfg = await run(
      path.join(tools, 'cmake'),
      [
        '-S',
        path.join(ROOT, 'packages', 'core-native'),
        '-B',
        build,
        '-DCMAKE_BUILD_TYPE=Release',
        '-DMATE_GUARD_UNIT_TESTS=OFF',
      ],
      { env, timeout: 120_000 },
    );
    assert.equal(cfg.code, 0, cfg.output);
    const lib = await run(path.join(tools, 'cmake'), ['--build', build, '--target', 'mate_guard_cuda', '-j', '2'], {
      env,
      timeout: 600_000,
    });
    assert.equal(lib.code, 0, lib.output);
    const wheelDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-no-node-wheel-'));
    const wheel = await run(
      'python3',
      [
        path.join(ROOT, 'packages', 'python', 'backend', 'mate_guard_backend.py'),
        '--library',
        path.join(build, 'libmate_guard_cuda.so'),
        '--out',
        wheelDir,
      ],
      { env, timeout: 120_000 },
    );
    assert.equal(wheel.code, 0, wheel.output);
    const [file] = fs.readdirSync(wheelDir).filter((f) => f.endsWith('.whl'));
    assert.match(file, /^mate_guard-[\d.]+-py3-none-manylinux_2_\d+_x86_64\.whl$/);
    const python = freshVenv('mate-py-no-node-', ['--no-index', path.join(wheelDir, file)]);
    const r = await run(python, ['-c', 'import mate_guard; print(mate_guard.is_guard_allocator_active())'], {
      timeout: 60_000,
    });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^False$/m);
  });
});
