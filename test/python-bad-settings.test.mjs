// Python's bad-settings exit path is every Node CLI's: one line
// `<program>: <what is wrong>` on stderr, nothing else, status 2. The same
// bad mode through mate-jest's flag, pytest's flag and environment variable,
// and `python -m mate_guard run`'s flag; then what stops a Python run before
// it starts (no guard library, no script) leaves the same way.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { PYTHON_PKG } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';

const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const BAD_MODE = '"bogus" is not a guard mode; use tail or head';

function pythonMissing() {
  try {
    execFileSync('python3', ['-c', 'import sys, pytest; assert sys.version_info >= (3, 11)'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'no python3 >= 3.11 with pytest';
  }
}

/** The plugin by -p, unless an installed mate-guard already registers it (pytest would refuse it twice). */
function pluginArgs() {
  try {
    execFileSync('python3', ['-c', 'import importlib.metadata as m; m.version("mate-guard")'], { stdio: 'ignore' });
    return [];
  } catch {
    return ['-p', 'mate_guard.pytest_plugin'];
  }
}

describe('bad settings leave Python as they leave every Node CLI', { skip: pythonMissing() }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-bad-'));
  fs.writeFileSync(path.join(dir, 'test_a.py'), 'def test_a():\n    pass\n');
  fs.writeFileSync(path.join(dir, 'script.py'), 'print("ran")\n');
  const python = (args, env = {}) =>
    run('python3', args, { cwd: dir, env: { PYTHONPATH: PYTHON_PKG, ...env }, timeout: 60_000 });
  const pytest = (args, env) => python(['-m', 'pytest', ...pluginArgs(), '-p', 'no:cacheprovider', ...args], env);

  /** One line naming the program, the source and the bad value; nothing on stdout; status 2. */
  const refused = (r, line) => {
    assert.equal(r.code, 2, r.output);
    assert.equal(r.stderr, `${line}\n`);
    assert.equal(r.stdout, '');
  };

  test('a bad --guard-mode: mate-jest, pytest, MATE_PYTEST_GUARD_MODE and python -m mate_guard run all print one line and exit 2', async () => {
    refused(await run(process.execPath, [MATE_JEST, '--guard-mode=bogus']), `mate-jest: --guard-mode: ${BAD_MODE}`);
    refused(await pytest(['--guard-mode=bogus']), `mate-guard: --guard-mode: ${BAD_MODE}`);
    refused(await pytest([], { MATE_PYTEST_GUARD_MODE: 'bogus' }), `mate-guard: MATE_PYTEST_GUARD_MODE: ${BAD_MODE}`);
    refused(
      await python(['-m', 'mate_guard', 'run', '--guard-mode=bogus', 'script.py']),
      `mate_guard: --guard-mode: ${BAD_MODE}`,
    );
    // guard-run's spelling, without `run`, as before.
    refused(await python(['-m', 'mate_guard', '--mode=bogus', 'script.py']), `mate_guard: --mode: ${BAD_MODE}`);
  });

  test("no guard library: pytest --guard-alloc and python -m mate_guard print one line and exit 2 (not pytest's usage error 4, not a traceback)", async () => {
    const env = { MATE_GUARD_CUDA_LIBRARY: path.join(dir, 'missing', 'libmate_guard_cuda.so') };
    const why = `the CUDA guard library is missing: ${env.MATE_GUARD_CUDA_LIBRARY} (a broken install? reinstall mate-guard)`;
    refused(await pytest(['--guard-alloc'], env), `mate-guard: ${why}`);
    refused(await python(['-m', 'mate_guard', 'run', 'script.py'], env), `mate_guard: ${why}`);
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-bad-reports-'));
    fs.writeFileSync(path.join(reports, 'mate-guard-1-1.json'), '{}');
    refused(await python(['-m', 'mate_guard', 'report', reports], env), `mate_guard report: ${why}`);
  });

  test('an empty native-heap glob (--guard-native, --native) is refused in one line, exit 2: it would guard nothing, silently', async () => {
    refused(
      await pytest(['--guard-alloc', '--guard-native', '']),
      'mate-guard: --guard-native: "" names no glob; use a glob',
    );
    refused(
      await python(['-m', 'mate_guard', '--native', '', 'script.py']),
      'mate_guard: --native: "" names no glob; use a glob',
    );
  });

  test('python -m mate_guard run with a script that is not there, a folder without __main__.py or --no- on a setting that is not a boolean: one line and exit 2; a good run still runs the script', async () => {
    refused(
      await python(['-m', 'mate_guard', 'run', 'nosuch.py']),
      "mate_guard: can't open file 'nosuch.py': no such file",
    );
    fs.mkdirSync(path.join(dir, 'nomain'), { recursive: true });
    refused(
      await python(['-m', 'mate_guard', 'nomain']),
      "mate_guard: can't find '__main__' module in 'nomain': a folder runs its __main__.py",
    );
    // `--no-` is for booleans: on a setting with a value it is no spelling (it set the value, the opposite of what it says).
    refused(
      await python(['-m', 'mate_guard', '--no-mode', 'head', 'script.py']),
      'mate_guard: unknown option "--no-mode"; did you mean --mode?',
    );
    const ok = await python(['-m', 'mate_guard', 'run', '--guard-mode', 'head', 'script.py']);
    assert.equal(ok.code, 0, ok.output);
    assert.equal(ok.stdout, 'ran\n');
  });
});
