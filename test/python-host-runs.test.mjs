// A Python run's reports reach the user whatever the run looks like: a
// report folder whose parents are missing, damage found in a forked child,
// damage made while pytest collects. Real pytest and python over numpy
// arrays on the checkout's package (PYTHONPATH); the CUDA driver is pointed
// at a missing file, so the runs are CPU-only on a GPU machine too.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { findXdist, noLibrary, noNumpy, project } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';

const XDIST = findXdist();
const EVENT = /^mate-guard-\d+-\d+\.json$/;
const COUNTERS = /^stats-\d+-\d+\.json$/;

// Two arrays damaged past their end and before their start (canary side: found at the free and at the test's end).
const TEST_BAD = `import numpy as np, ctypes
def test_overflow():
    a = np.zeros(10, dtype=np.uint8)
    ctypes.memset(a.ctypes.data + 10, 0x41, 1)
def test_underflow():
    a = np.zeros(16, dtype=np.uint8)
    ctypes.memset(a.ctypes.data - 1, 0x41, 1)
def test_ok():
    pass
`;
const SCRIPT_BAD = `import numpy as np, ctypes
a = np.zeros(10, dtype=np.uint8)
ctypes.memset(a.ctypes.data + 10, 1, 1)
del a
`;

const env = (dir, extra = {}) => ({
  PYTHONPATH: `${path.join(ROOT, 'packages', 'python')}:${dir}`,
  MATE_GUARD_CUDA_DRIVER: path.join(dir, 'no-such-libcuda.so.1'),
  ...extra,
});
const pytest = (dir, args, extra) =>
  run('python3', ['-m', 'pytest', '-p', 'mate_guard.pytest_plugin', '-p', 'no:cacheprovider', '-rfs', ...args], {
    cwd: dir,
    env: env(dir, extra),
    timeout: 120_000,
  });
const python = (dir, args, extra) => run('python3', args, { cwd: dir, env: env(dir, extra), timeout: 60_000 });
const events = (folder) => fs.readdirSync(folder).filter((f) => EVENT.test(f));

describe('Python runs: where reports go and which test they fail', { skip: noNumpy() || noLibrary() }, () => {
  test('a report folder whose parents are missing (flag, MATE_GUARD_REPORT_DIR, python -m mate_guard --report-dir) is made with them: the damaging tests fail and their reports are filed there', async () => {
    const dir = project('mate-py-rd-', { 'test_bad.py': TEST_BAD, 's.py': SCRIPT_BAD });
    for (const [args, extra, folder] of [
      [['--guard-report-dir', 'out/mate-guard'], {}, path.join(dir, 'out', 'mate-guard')],
      [[], { MATE_GUARD_REPORT_DIR: path.join(dir, 'missing2', 'x') }, path.join(dir, 'missing2', 'x')],
    ]) {
      const r = await pytest(dir, ['--guard-alloc', '--no-guard-rerun', ...args, 'test_bad.py'], extra);
      assert.equal(r.code, 1, r.output);
      assert.match(r.stdout, /2 failed, 1 passed/, r.output);
      assert.match(r.stdout, /FAILED test_bad\.py::test_overflow - ==mate-guard== ERROR: canary-corruption/, r.output);
      assert.equal(events(folder).length, 2, r.output);
      assert.ok(r.stdout.includes(`[mate-guard] report files (JSON, every process's): ${folder}`), r.output);
    }
    const s = await python(dir, ['-m', 'mate_guard', '--report-dir', 'two/levels', 's.py']);
    assert.equal(s.code, 1, s.output);
    assert.equal(events(path.join(dir, 'two', 'levels')).length, 1, s.output);
    const printed = await python(dir, ['-m', 'mate_guard', 'report', 'two/levels']);
    assert.equal(printed.code, 1, printed.output);
    assert.match(printed.stdout, /canary-corruption/);
  });

  test('a report folder that cannot be made stops pytest and python -m mate_guard before anything runs: one line naming it, exit 2', async () => {
    const dir = project('mate-py-rd-bad-', { 'test_bad.py': TEST_BAD, 's.py': SCRIPT_BAD, afile: 'x' });
    const folder = path.join(dir, 'afile', 'reports');
    const r = await pytest(dir, ['--guard-alloc', '--guard-report-dir', folder, 'test_bad.py']);
    assert.equal(r.code, 2, r.output);
    assert.equal(r.stderr.trim(), `mate-guard: the report folder ${folder} cannot be made: ${folder}: Not a directory`);
    assert.doesNotMatch(r.stdout, /passed|failed/);
    const s = await python(dir, ['-m', 'mate_guard', '--report-dir', folder, 's.py']);
    assert.equal(s.code, 2, s.output);
    // The same words as pytest's, under python -m mate_guard's name.
    assert.equal(s.stderr, `mate_guard: the report folder ${folder} cannot be made: ${folder}: Not a directory\n`);
  });

  test('a report folder removed during a run: the damaging test still fails, saying its report could not be filed', async () => {
    const dir = project('mate-py-rd-gone-', {
      'test_gone.py': `import numpy as np, ctypes, os, shutil
def test_gone():
    shutil.rmtree(os.environ['GONE'])
    a = np.zeros(10, dtype=np.uint8)
    ctypes.memset(a.ctypes.data + 10, 0x41, 1)
    del a
def test_ok():
    pass
`,
    });
    const folder = path.join(dir, 'reports');
    const r = await pytest(dir, ['--guard-alloc', '--no-guard-rerun', '--guard-report-dir', folder, 'test_gone.py'], {
      GONE: folder,
    });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stdout,
      /FAILED test_gone\.py::test_gone - ==mate-guard== ERROR: 1 violation whose report could not be written to the report folder/,
      r.output,
    );
    assert.match(r.stdout, /1 failed, 1 passed/, r.output);
    assert.match(r.stdout, /^\[mate-guard\] guarded: host memory \(numpy arrays: guarded, 1 allocation\); /m, r.output);
  });

  test("damage found in a multiprocessing fork child fails the parent's test that was running (the child's report is its failure) and counts in the summary; python -m mate_guard exits 1 on it; no marker is left in the report folder", async () => {
    const work = `import multiprocessing as mp, numpy as np, ctypes
def work():
    a = np.zeros(10, dtype=np.uint8)
    ctypes.memset(a.ctypes.data + 10, 1, 1)
    del a
`;
    const dir = project('mate-py-fork-', {
      'test_forkchild.py': `${work}def test_child_overflow():
    p = mp.get_context("fork").Process(target=work); p.start(); p.join()
    assert p.exitcode == 0
def test_after():
    pass
`,
      's.py': `${work}if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=work); p.start(); p.join()
    print("child exit", p.exitcode)
`,
    });
    const folder = path.join(dir, 'reports');
    const r = await pytest(dir, [
      '--guard-alloc',
      '--no-guard-rerun',
      '--guard-report-dir',
      folder,
      'test_forkchild.py',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /1 failed, 1 passed/, r.output);
    assert.match(
      r.stdout,
      /FAILED test_forkchild\.py::test_child_overflow - ==mate-guard== ERROR: canary-corruption/,
      r.output,
    );
    assert.match(r.stdout, /\[mate-guard\] summary: .*, 1 violation, /, r.output);
    assert.deepEqual(
      fs.readdirSync(folder).filter((f) => !EVENT.test(f) && !COUNTERS.test(f)),
      [],
      "only report files and the parent's counters are left",
    );
    assert.equal(events(folder).length, 1);
    const s = await python(dir, ['-m', 'mate_guard', 's.py']);
    assert.equal(s.code, 1, s.output);
    assert.match(s.stdout, /child exit 0/);
    assert.match(
      s.stderr,
      /==mate-guard== 1 violation in this process and its forked children \(1 in children\): exit status 1/,
    );
  });

  test("damage made while pytest collects (a test module's import: an array freed, one kept) fails the session as found outside any test, never the first test to run", async () => {
    const dir = project('mate-py-collect-', {
      'test_a_first.py': 'def test_a_innocent():\n    pass\n',
      'test_b_coll.py': `import numpy as np, ctypes
_a = np.zeros(10, dtype=np.uint8)
ctypes.memset(_a.ctypes.data + 10, 1, 1)
del _a
_keep = np.zeros(10, dtype=np.uint8)
ctypes.memset(_keep.ctypes.data + 10, 1, 1)
def test_b():
    pass
`,
    });
    const r = await pytest(dir, ['--guard-alloc', '--no-guard-rerun']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, / 2 passed in /, r.output);
    assert.doesNotMatch(r.stdout, /FAILED/, r.output);
    const found = r.stdout.split(
      '[mate-guard] found at the end of collection, outside any test (made while pytest imported the test modules and conftests): the session fails\n',
    );
    assert.equal(found.length, 3, r.output);
    for (const text of found.slice(1)) {
      assert.match(text, /^==mate-guard== ERROR: canary-corruption: 1 byte past the end of allocation/);
      assert.doesNotMatch(text.split('[mate-guard] ')[0], /==mate-guard== test:/);
    }
    assert.match(r.stdout, /\[mate-guard\] summary: .*, 2 violations, /, r.output);
  });

  test("under xdist, a worker killed by a fault still counts in the summary: its arrays in the allocations, the peak live and the guarded line's numpy count alike", {
    skip: XDIST.skip ?? false,
  }, async () => {
    const dir = project('mate-py-dead-', {
      'test_fault.py': `import numpy as np, ctypes
def test_overflow_fault():
    keep = [np.zeros(8) for _ in range(3000)]
    a = np.zeros(16, dtype=np.uint8)
    ctypes.memset(a.ctypes.data + 16, 1, 1)
`,
      'test_other.py': 'def test_other():\n    pass\n',
    });
    const r = await pytest(dir, ['--guard-alloc', '-n', '2'], {
      PYTHONPATH: [env(dir).PYTHONPATH, XDIST.path].filter(Boolean).join(':'),
    });
    assert.notEqual(r.code, 0, r.output);
    const m = /^\[mate-guard\] summary: (\d+) allocations guarded, peak live (\d+),/m.exec(r.stdout);
    assert.ok(m, r.output);
    assert.ok(Number(m[1]) >= 3001 && Number(m[2]) >= 3001, r.stdout);
    const g = /^\[mate-guard\] guarded: host memory \(numpy arrays: guarded, (\d+) allocations/m.exec(r.stdout);
    assert.ok(g && Number(g[1]) >= 3001, r.stdout);
  });

  test('native-heap globs: --guard-native repeats, an ini list is one glob per line (or several on a line), and a glob that matched no loaded module is warned of in the summary (pytest, also under xdist) and at exit (python -m mate_guard)', async () => {
    const dir = project('mate-py-globs-', {
      'test_x.py': 'import numpy\ndef test_x():\n    pass\n',
      's.py': 'import numpy\nprint("ran")\n',
    });
    const warning = (glob) =>
      `[mate-guard] warning: native heap: "${glob}" matched no loaded module, so nothing of it was guarded (globs match a module's absolute path or file name, e.g. '*_myext*.so')`;
    const warnings = (out) => out.split('\n').filter((l) => l.startsWith('[mate-guard] warning: native heap:'));
    const r = await pytest(dir, [
      '--guard-alloc',
      '--guard-native',
      '*_mytypo*.so',
      '--guard-native',
      '*_multiarray_umath*',
      'test_x.py',
    ]);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /native heap of \*_mytypo\*\.so, \*_multiarray_umath\*: /, r.output);
    assert.deepEqual(warnings(r.stdout), [warning('*_mytypo*.so')], r.output);
    fs.writeFileSync(
      path.join(dir, 'pytest.ini'),
      '[pytest]\nguard_alloc = true\nguard_native = *_typo_a*.so\n  *_typo_b*.so *_multiarray_umath*\n',
    );
    const ini = await pytest(dir, ['test_x.py']);
    assert.equal(ini.code, 0, ini.output);
    assert.match(ini.stdout, /native heap of \*_typo_a\*\.so, \*_typo_b\*\.so, \*_multiarray_umath\*: /, ini.output);
    assert.deepEqual(warnings(ini.stdout), [warning('*_typo_a*.so'), warning('*_typo_b*.so')], ini.output);
    const s = await python(dir, ['-m', 'mate_guard', '--native', '*_mytypo*.so', 's.py']);
    assert.equal(s.code, 0, s.output);
    assert.equal(s.stdout, 'ran\n');
    assert.deepEqual(warnings(s.stderr), [warning('*_mytypo*.so')], s.output);
  });

  test("a clean run given a report folder keeps it with each process's counters: python -m mate_guard report and mate report read it as a clean run (exit 0), not as a folder with no run (exit 2)", async () => {
    const dir = project('mate-py-clean-', { 'test_x.py': 'import numpy\ndef test_x():\n    numpy.zeros(4)\n' });
    const folder = path.join(dir, 'out', 'reports');
    const r = await pytest(dir, ['--guard-alloc', '--guard-report-dir', folder, 'test_x.py']);
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(
      fs.readdirSync(folder).map((f) => COUNTERS.test(f)),
      [true],
      'one process: its counters',
    );
    const printed = await python(dir, ['-m', 'mate_guard', 'report', folder]);
    assert.equal(printed.code, 0, printed.output);
    assert.equal(printed.stdout, `[mate-guard] no violations: ${folder} holds clean runs only\n`);
    const merged = await run(process.execPath, [
      path.join(ROOT, 'packages', 'core-native', 'bin', 'mate.js'),
      'report',
      folder,
    ]);
    assert.equal(merged.code, 0, merged.output);
    assert.match(
      merged.stdout,
      /\[mate-guard\] summary: \d+ allocations? guarded, .*0 violations, 0 tests skipped by tag/,
      merged.output,
    );
    // Its counters file named itself is that clean run too, not a report that cannot be read (exit 1).
    const counters = path.join(folder, fs.readdirSync(folder)[0]);
    const one = await python(dir, ['-m', 'mate_guard', 'report', counters]);
    assert.equal(one.code, 0, one.output);
    assert.equal(one.stdout, `[mate-guard] no violations: ${counters} holds clean runs only\n`, one.output);
    assert.equal(one.stderr, '', one.output);
    const empty = fs.mkdtempSync(path.join(dir, 'empty-'));
    const none = await python(dir, ['-m', 'mate_guard', 'report', empty]);
    assert.equal(none.code, 2, none.output);
  });
});
