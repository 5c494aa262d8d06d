// Host memory in Python processes (packages/python over the host C ABI of
// libmate_guard_cuda.so): numpy arrays through the guard's NEP 49 handler
// and the native heap of a chosen extension module, under pytest and plain
// python. The extension (test/fixtures/python-host/badext.c, planted bugs)
// is built here with the system compiler; the package runs from the
// checkout (PYTHONPATH). The CUDA driver is pointed at a missing file, so
// the runs are CPU-only on a GPU machine too.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildExtension, findPytest7, findXdist, noExtensionBuild, noLibrary, noNumpy } from './helpers/python.mjs';
import { MATE, ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'python-host');
const NO_DRIVER = 'the CUDA driver (libcuda.so.1) could not be loaded: no NVIDIA driver on this machine';

function why() {
  return noNumpy() || noExtensionBuild() || noLibrary();
}

const XDIST = findXdist();
const PYTEST7 = findPytest7();

/**
 * A pytest run that went on after faults reads as one run on the terminal (`r`, run with -v): one session
 * header and one "collected" line, one line where each fresh process goes on (`tests`: [name, outcome,
 * process] for a test whose fault ended process - 1), and each test's result line once, in order.
 */
function assertReadsAsOneRun(r, file, collected, tests) {
  assert.equal(r.stdout.match(/=+ test session starts =+/g)?.length, 1, r.output);
  assert.equal(r.stdout.match(/^platform /gm)?.length, 1, r.output);
  assert.equal(r.stdout.match(/^rootdir: /gm)?.length, 1, r.output);
  assert.equal(r.stdout.match(/collected \d+ items?/g)?.join(), `collected ${collected} items`, r.output);
  const faulted = tests.filter((t) => t[2]);
  assert.deepEqual(
    [
      ...r.stdout.matchAll(
        /^\[mate-guard\] pytest goes on after a fault on guarded memory in (\S+) \(process (\d+) of the run, the same command line; the results so far carry over\)$/gm,
      ),
    ].map((m) => `${m[1]} ${m[2]}`),
    faulted.map(([name, , n]) => `${file}::${name} ${n}`),
    r.output,
  );
  const results = [...r.stdout.matchAll(new RegExp(`^${file.replace('.', '\\.')}::(\\w+) ([A-Z]+)`, 'gm'))].map(
    (m) => `${m[1]} ${m[2]}`,
  );
  assert.deepEqual(
    results,
    tests.map(([name, outcome]) => `${name} ${outcome}`),
    r.output,
  );
  // Each fresh process's line comes where the one before stopped, right before the faulting test's result.
  for (const [name, outcome, n] of faulted)
    assert.match(
      r.stdout,
      new RegExp(`\\(process ${n} of the run, [^\\n]*\\)\\n${file.replace('.', '\\.')}::${name} ${outcome} `),
      r.output,
    );
}

describe('Python host memory: numpy arrays and an extension heap', { skip: why() }, () => {
  let dir, beforeDir;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-'));
    buildExtension(path.join(FIX, 'badext.c'), dir, '_badext');
    for (const f of ['test_arrays.py', 'script_bugs.py']) fs.copyFileSync(path.join(FIX, f), path.join(dir, f));
    beforeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-before-')); // its own: its conftest makes arrays
    fs.cpSync(path.join(FIX, 'before'), beforeDir, { recursive: true });
  });

  const env = () => ({
    PYTHONPATH: `${path.join(ROOT, 'packages', 'python')}:${dir}`,
    MATE_GUARD_CUDA_DRIVER: path.join(dir, 'no-such-libcuda.so.1'),
    MATE_PYTEST_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-reports-')),
    MATE_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-reports-')),
  });
  const pytest = (args, extraEnv = {}, cwd = dir) =>
    run('python3', ['-m', 'pytest', '-p', 'mate_guard.pytest_plugin', '-p', 'no:cacheprovider', '-rfs', ...args], {
      cwd,
      env: { ...env(), ...extraEnv },
      timeout: 120_000,
    });
  const python = (args) => run('python3', args, { cwd: dir, env: env(), timeout: 60_000 });
  // What the one-step rerun of `name` with `flags` printed in run `r`.
  const rerunOf = (r, name, flags) => {
    const out = r.stdout.split(
      `[mate-guard] rerun of test_arrays.py::${name} with ${flags}, to fault at the first bad access:\n`,
    )[1];
    assert.ok(out, r.output);
    return out;
  };
  // Each `[mate-guard] rerun in ...` block of a report's output: its line and the report under it.
  const rerunBlocks = (out) =>
    [...out.matchAll(/^\[mate-guard\] rerun in .*\n(?:==mate-guard== .*\n)*/gm)].map((m) => m[0]);
  const section = (out, name) => out.split(new RegExp(`_+ ${name} _+`))[1]?.split(/\n_{5,} /)[0] ?? '';

  test("pytest --guard-alloc without a GPU guards host memory and says so; clean array and heap tests pass; each planted bug fails the test that made it (heap chosen by MATE_PYTEST_GUARD_NATIVE); canary damage (an array's, and a native block's in malloc's rounding) is rerun where it faults", async () => {
    const r = await pytest(['--guard-alloc', '-k', 'not fault'], { MATE_PYTEST_GUARD_NATIVE: '*_badext*.so' });
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /^test_arrays\.py \.\.\.\.F\.FFF/m, r.output);
    const failed = [...r.stdout.matchAll(/^FAILED test_arrays\.py::(\w+) - ==mate-guard== ERROR: ([\w-]+)/gm)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    assert.deepEqual(
      failed,
      [
        'test_canary_before_start canary-corruption',
        'test_heap_double_free double-free',
        'test_heap_tail_slack canary-corruption',
        'test_free_array_data invalid-free',
      ],
      r.output,
    );
    const canary = section(r.stdout, 'test_canary_before_start');
    assert.match(
      canary,
      /==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(100 bytes, tail mode\) damaged/,
    );
    assert.match(canary, /==mate-guard== test: test_arrays\.py::test_canary_before_start\n/);
    assert.match(canary, /backend host/);
    assert.match(canary, /at test_canary_before_start \(.*test_arrays\.py:74\)/, "the allocation's Python stack");
    assert.match(canary, /#0 PyDataMem_UserNEW/, "the allocation's native stack");
    assert.match(
      canary,
      /called from Python at:\n==mate-guard== {3}at test_canary_before_start /,
      'the Python caller is named as Python',
    );
    assert.doesNotMatch(r.stdout, /called from JS at:|JS buffer|buffer\.length/, 'no Node wording in a Python report');
    const dbl = section(r.stdout, 'test_heap_double_free');
    assert.match(dbl, /freed again at:\n==mate-guard== {3}#0 heap_double_free .*badext\.c:88/);
    assert.match(dbl, /first freed at:\n==mate-guard== {3}#0 heap_double_free .*badext\.c:87/);
    assert.match(section(r.stdout, 'test_free_array_data'), /#0 free_data .*badext\.c:50/);
    assert.match(
      r.stdout,
      /^\[mate-guard\] summary: \d+ allocations guarded, peak live \d+, 0 unguarded fallbacks, 4 violations, 0 tests skipped by tag$/m,
    );
    assert.match(
      r.stdout,
      new RegExp(
        `^\\[mate-guard\\] guarded: host memory \\(numpy arrays: guarded, \\d+ allocations(, not guarded: [^;]+)?; native heap of \\*_badext\\*\\.so: [1-9]\\d* allocations\\); CUDA device memory: not guarded \\(${NO_DRIVER.replace(/[()]/g, '\\$&')}\\)$`,
        'm',
      ),
    );
    assert.doesNotMatch(r.output, /could not start/);
    // Every report was filed: the native heap's too (its events' backend is native-heap).
    assert.doesNotMatch(r.output, /could not be written/, r.output);
    // The canary damage is rerun once in head mode, where the write faults at its site.
    assert.match(
      rerunOf(r, 'test_canary_before_start', '--guard-mode head'),
      /^==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(100 bytes, head mode\)\n==mate-guard== test: test_arrays\.py::test_canary_before_start\n==mate-guard== access:\n==mate-guard== {3}#0 write_at .*badext\.c:25/,
    );
    // The extension's write into malloc's rounding (10 bytes asked, byte 12
    // written) is rerun with that size alone placed byte-exact, and faults there.
    assert.match(
      rerunOf(r, 'test_heap_tail_slack', '--guard-native-exact-size 10'),
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 3 bytes past the end of allocation #\d+ \(10 bytes, tail mode\)\n==mate-guard== test: test_arrays\.py::test_heap_tail_slack\n==mate-guard== access:\n==mate-guard== {3}#0 heap_tail_slack .*badext\.c:74/,
    );
    assert.match(
      section(r.stdout, 'test_heap_tail_slack'),
      /hint: the write landed in the gap malloc's 16-byte alignment leaves: rerun with the native heap's 10-byte allocations placed byte-exact to fault at the first bad access \(--guard-native-exact-size=10 for pytest and python -m mate_guard, --native-exact-size 10 for mate guard-run\)/,
      "a Python user's flags",
    );
    assert.doesNotMatch(
      r.stdout,
      /rerun of test_arrays\.py::test_(heap_double|free)/,
      'no placement makes a bad free fault: not rerun',
    );
  });

  const faults = [
    [
      'test_fault_overflow',
      [],
      /heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(80 bytes, tail mode\)/,
      /#0 write_at .*badext\.c:25/,
    ],
    [
      'test_fault_underflow',
      ['--guard-mode', 'head'],
      /heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(80 bytes, head mode\)/,
      /#0 write_at .*badext\.c:25/,
    ],
    [
      'test_fault_use_after_free',
      [],
      /heap-use-after-free on READ at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(80 bytes, tail mode\)/,
      /#0 read_kept .*badext\.c:41/,
    ],
    [
      'test_fault_heap_overflow',
      [],
      /heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(16 bytes, tail mode\)/,
      /#0 heap_overflow .*badext\.c:67/,
    ],
    // Sampling one allocation in 1000: a call site's first allocations are guarded all the same.
    [
      'test_fault_heap_overflow',
      ['--guard-native-sample-rate', '1000'],
      /heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(16 bytes, tail mode\)/,
      /#0 heap_overflow .*badext\.c:67/,
    ],
    [
      'test_fault_heap_use_after_free',
      [],
      /heap-use-after-free on READ at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(32 bytes, tail mode\)/,
      /#0 heap_use_after_free .*badext\.c:82/,
    ],
    // A threading.Thread started after install: numpy's handler is per context, set in the thread before it runs.
    [
      'test_fault_thread_overflow',
      [],
      /heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(96 bytes, tail mode\)/,
      /#0 write_at .*badext\.c:25/,
    ],
  ];
  test("head mode: a native block's damage past its end, in malloc's rounding, is rerun in tail mode with that size byte-exact, and faults there; the hint says both", async () => {
    const r = await pytest([
      '--guard-alloc',
      '--guard-mode',
      'head',
      '--guard-native',
      '*_badext*.so',
      'test_arrays.py::test_heap_tail_slack',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(
      section(r.stdout, 'test_heap_tail_slack'),
      /hint: canary damaged past the end in head mode: rerun in tail mode with the native heap's 10-byte allocations placed byte-exact to fault at the first bad access \(--guard-mode=tail --guard-native-exact-size=10 for pytest and python -m mate_guard, --mode tail --native-exact-size 10 for mate guard-run\)/,
      r.output,
    );
    assert.match(
      rerunOf(r, 'test_heap_tail_slack', '--guard-mode tail --guard-native-exact-size 10'),
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 3 bytes past the end of allocation #\d+ \(10 bytes, tail mode\)\n/,
      r.output,
    );
  });

  test("the one-step rerun files into a folder of its own: the run's report folder holds the canary report once, with the rerun's fault attached as rerun, and python -m mate_guard report prints one violation", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-rerun-dir-'));
    // `=`: a separate value outside the project would count as a path for pytest's rootdir.
    const r = await pytest([
      '--guard-alloc',
      `--guard-report-dir=${folder}`,
      'test_arrays.py::test_canary_before_start',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(rerunOf(r, 'test_canary_before_start', '--guard-mode head'), /heap-buffer-underflow on WRITE/);
    const events = fs.readdirSync(folder).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
    assert.equal(events.length, 1, `${events.join(', ')}\n${r.output}`);
    assert.equal(fs.readdirSync(folder).filter((f) => /^stats-\d+-\d+\.json$/.test(f)).length, 1, 'no rerun counters');
    const event = JSON.parse(fs.readFileSync(path.join(folder, events[0]), 'utf8'));
    assert.equal(event.kind, 'canary-corruption');
    assert.equal(event.rerun.mode, 'head');
    assert.equal(event.rerun.fault.kind, 'heap-buffer-underflow');
    assert.equal(event.rerun.fault.test, 'test_arrays.py::test_canary_before_start');
    const report = await python(['-m', 'mate_guard', 'report', folder]);
    assert.equal(report.code, 1, report.output);
    // The canary report, and under it the rerun's block with its fault: one violation, the fault not a second.
    const blocks = rerunBlocks(report.stdout);
    assert.equal(blocks.length, 1, report.output);
    assert.match(blocks[0], /faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE /);
    const outside = report.stdout.replace(blocks[0], '');
    assert.equal([...outside.matchAll(/^==mate-guard== ERROR: /gm)].length, 1, report.output);
  });

  test("mate report and python -m mate_guard report on a pytest run's kept report folder show, under each canary report, the rerun's fault: the same report pytest printed under its rerun line, with the rerun's placement, in the same block", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-rerun-report-'));
    const r = await pytest(
      [
        '--guard-alloc',
        `--guard-report-dir=${folder}`,
        'test_arrays.py::test_canary_before_start',
        'test_arrays.py::test_heap_tail_slack',
      ],
      { MATE_PYTEST_GUARD_NATIVE: '*_badext*.so' },
    );
    assert.equal(r.code, 1, r.output);
    const report = await run(process.execPath, [MATE, 'report', folder], { timeout: 60_000 });
    assert.equal(report.code, 1, report.output);
    assert.match(report.stdout, /\[mate-guard\] summary: .*, 2 violations, /, report.output);
    for (const [name, flags, label, original, fault] of [
      [
        'test_canary_before_start',
        '--guard-mode head',
        'head mode',
        '1 byte before the start of allocation #\\d+ \\(100 bytes, tail mode\\)',
        'heap-buffer-underflow',
      ],
      [
        'test_heap_tail_slack',
        '--guard-native-exact-size 10',
        "tail mode with the native heap's 10-byte allocations placed byte-exact",
        '3 bytes past the end of allocation #\\d+ \\(10 bytes, tail mode\\)',
        'heap-buffer-overflow',
      ],
    ]) {
      // What pytest printed under its rerun line: the rerun's fault report.
      const printed = rerunOf(r, name, flags).split(/\n(?!==mate-guard== )/)[0];
      assert.match(printed, new RegExp(`^==mate-guard== ERROR: ${fault} on WRITE `), r.output);
      // mate report: the canary report, then the rerun's line and that same report.
      assert.match(
        report.stdout,
        new RegExp(
          `==mate-guard== ERROR: canary-corruption: ${original} damaged\\n(?:==mate-guard== .*\\n)*?==mate-guard== suppression: canary-corruption .*test=test_arrays\\.py::${name}\\n\\[mate-guard\\] rerun in ${label.replace(/[()]/g, '\\$&')}: the canary-corruption of allocation #\\d+ \\(\\d+ bytes, tail mode\\) in test_arrays\\.py::${name} faults at the first bad access:\\n`,
        ),
        report.output,
      );
      assert.ok(
        report.stdout.includes(`faults at the first bad access:\n${printed}\n`),
        `mate report shows the fault pytest printed:\n${printed}\n---\n${report.output}`,
      );
    }
    // python -m mate_guard report: the same blocks, from the same formatter.
    const pyReport = await python(['-m', 'mate_guard', 'report', folder]);
    assert.equal(pyReport.code, 1, pyReport.output);
    const shown = rerunBlocks(report.stdout).sort();
    assert.equal(shown.length, 2, report.output);
    assert.deepEqual(rerunBlocks(pyReport.stdout).sort(), shown, pyReport.output);
  });

  test("a double free in the extension's heap is filed at the free: in a multiprocessing fork child (which ends by os._exit, no check after it) it fails the parent's test, and python -m mate_guard exits 1 on it", async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-fork-'));
    const work = `import multiprocessing as mp, _badext
def work():
    _badext.heap_double_free()
`;
    fs.writeFileSync(
      path.join(own, 'test_fork_free.py'),
      `${work}def test_child_double_free():
    p = mp.get_context("fork").Process(target=work); p.start(); p.join()
    assert p.exitcode == 0
def test_after():
    pass
`,
    );
    fs.writeFileSync(
      path.join(own, 's.py'),
      `${work}if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=work); p.start(); p.join()
    print("child exit", p.exitcode)
`,
    );
    const r = await pytest(['--guard-alloc', '--guard-native', '*_badext*.so', '--no-guard-rerun'], {}, own);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stdout,
      /FAILED test_fork_free\.py::test_child_double_free - ==mate-guard== ERROR: double-free/,
      r.output,
    );
    assert.match(r.stdout, /1 failed, 1 passed/, r.output);
    const p = await run('python3', ['-m', 'mate_guard', '--native', '*_badext*.so', 's.py'], {
      cwd: own,
      env: env(),
      timeout: 60_000,
    });
    assert.equal(p.code, 1, p.output);
    assert.match(
      p.stderr,
      /ERROR: double-free of 0x[0-9a-f]+: allocation #\d+ \(\d+ bytes, tail mode\) was already freed/,
    );
    assert.match(p.stderr, /1 violation in this process and its forked children \(1 in children\): exit status 1/);
  });

  test("without captured stacks (--no-guard-capture-stacks) a report is still worded for Python: its hint names the array's size and pytest's flags, never a JS buffer's length", async () => {
    // Head mode: the write one past the array's end hits the canary; the one-step rerun in tail mode faults at it.
    const r = await pytest([
      '--guard-alloc',
      '--guard-mode',
      'head',
      '--no-guard-capture-stacks',
      'test_arrays.py::test_fault_overflow',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /allocated at \(no stack captured: captureStacks is off\)/, r.output);
    assert.match(
      rerunOf(r, 'test_fault_overflow', '--guard-mode tail'),
      /hint: native code accessed past the end: check the length it was given \(the array's size \/ nbytes\)/,
      r.output,
    );
    assert.doesNotMatch(r.output, /buffer\.length|JS buffer|installGuardAllocator/, r.output);
  });

  test("a heap chosen by a conftest through mate_guard.guard_native_modules() is guarded and named in the summary's guarded: line, as one given by --guard-native", async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-api-'));
    fs.copyFileSync(path.join(FIX, 'test_arrays.py'), path.join(own, 'test_arrays.py'));
    fs.writeFileSync(
      path.join(own, 'conftest.py'),
      `import mate_guard, pytest
@pytest.fixture(autouse=True, scope='session')
def _guard_the_extension():
    mate_guard.guard_native_modules(['*_badext*.so'])
`,
    );
    const r = await pytest(['--guard-alloc', '--no-guard-rerun', '-k', 'clean_heap or heap_double_free'], {}, own);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stdout,
      /FAILED test_arrays\.py::test_heap_double_free - ==mate-guard== ERROR: double-free/,
      r.output,
    );
    assert.match(
      r.stdout,
      /^\[mate-guard\] guarded: host memory \(numpy arrays: [^;]*; native heap of \*_badext\*\.so: [1-9]\d* allocations?\); /m,
      r.output,
    );
  });

  test('damage a test does to arrays made before it (at import, by a module fixture, by an earlier test) fails that test; the tests around them pass', async () => {
    const longDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-long-'));
    fs.cpSync(path.join(FIX, 'long-lived'), longDir, { recursive: true });
    const r = await pytest(['--guard-alloc', '--no-guard-rerun'], {}, longDir);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /^test_long_lived\.py \.FFF\./m, r.output);
    for (const [name, bytes] of [
      ['test_underflows_the_module_array', '1 byte'],
      ['test_underflows_the_fixture_array', '2 bytes'],
      ['test_underflows_the_earlier_test_array', '3 bytes'],
    ]) {
      const s = section(r.stdout, name);
      assert.match(s, new RegExp(`ERROR: canary-corruption: ${bytes} before the start`), name);
      assert.ok(s.includes(`==mate-guard== test: test_long_lived.py::${name}\n`), s);
    }
    assert.match(r.stdout, /^\[mate-guard\] summary: .*, 3 violations, /m, r.output);
  });

  test("an overflow, underflow or use-after-free of a numpy array (also one made in a thread) or of the extension's heap (also sampled) faults at the access: the report names the kind, the test's node id and the access site file:line, the interpreter's frames folded; the test fails with it, saying under the report that pytest goes on in a fresh process", async () => {
    for (const [name, flags, headline, site] of faults) {
      const r = await pytest(['--guard-alloc', '--guard-native', '*_badext*.so', ...flags, `test_arrays.py::${name}`]);
      assert.equal(r.code, 1, `${name} ${flags.join(' ')}: ${r.output}`);
      assert.match(r.stderr, new RegExp(`==mate-guard== ERROR: ${headline.source}`), `${name}: ${r.output}`);
      assert.match(r.stderr, new RegExp(`==mate-guard== test: test_arrays\\.py::${name}\\n`), `${name}: ${r.output}`);
      assert.match(r.stderr, site, `${name}: ${r.output}`);
      // The interpreter's frames below the extension's are folded (a shared
      // libpython's too), not listed one by one.
      assert.match(
        r.stderr,
        /==mate-guard== access:\n==mate-guard== {3}#0 .*\n(==mate-guard== {3}#1 .*\n)?==mate-guard== {3}… \d+ more frames? in the runtime\n/,
        `${name}: ${r.output}`,
      );
      // Said under the report: the process ends, pytest goes on in its place.
      assert.match(
        r.stderr,
        /\n==mate-guard== suppression: .*\n==mate-guard== pytest goes on in a fresh process \(the same command line, the same pid\): a fault on guarded memory ends this one, so this test fails with the report above, and the results so far carry over\n/,
        `${name}: ${r.output}`,
      );
      assert.match(
        r.stdout,
        new RegExp(`^FAILED test_arrays\\.py::${name} - ==mate-guard== ERROR: ${headline.source.slice(0, 20)}`, 'm'),
        `${name}: ${r.output}`,
      );
      assert.match(r.stdout, /^=+ 1 failed in /m, `${name}: ${r.output}`);
    }
  });

  test("after a fault on guarded memory plain pytest goes on in the process's place, again after a second fault (a forked child's fault kills the child only): the faulting tests fail (in setup: an error) with their reports, the tests before and after keep their results, and the terminal, junitxml, -x, the summary's counts and the exit status see the whole run; the terminal reads as one run (one session header, one line where each fresh process goes on, each test's result once) and the summary's and junitxml's duration are the whole run's", async () => {
    const onDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-goes-on-'));
    fs.copyFileSync(path.join(FIX, 'goes-on', 'test_goes_on.py'), path.join(onDir, 'test_goes_on.py'));
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-goes-on-reports-'));
    const started = Date.now();
    const r = await pytest(
      ['--guard-alloc', '--no-guard-rerun', '-v', '--junitxml=junit.xml', 'test_goes_on.py'],
      {
        MATE_PYTEST_GUARD_REPORT_DIR: reports,
      },
      onDir,
    );
    const wall = (Date.now() - started) / 1000;
    assert.equal(r.code, 1, r.output);
    // Each fault's report, then the note, on the terminal's stderr.
    assert.equal(r.stderr.match(/==mate-guard== pytest goes on in a fresh process/g)?.length, 2, r.output);
    assert.equal(
      r.stderr.match(/==mate-guard== test: test_goes_on\.py::test_forked_child_faults\n/g)?.length,
      1,
      r.output,
    );
    assertReadsAsOneRun(r, 'test_goes_on.py', 7, [
      ['test_forked_child_faults', 'FAILED'],
      ['test_before_passes', 'PASSED'],
      ['test_before_fails', 'FAILED'],
      ['test_overflows', 'FAILED', 2],
      ['test_between_skipped', 'SKIPPED'],
      ['test_overflows_in_setup', 'ERROR', 3],
      ['test_after_passes', 'PASSED'],
    ]);
    assert.match(r.stdout, /^=+ 3 failed, 2 passed, 1 skipped, 1 error in /m, r.output);
    // The duration is the whole run's: test_before_passes slept 1 s in the first process.
    const seconds = Number(/^=+ 3 failed, 2 passed, 1 skipped, 1 error in ([\d.]+)s/m.exec(r.stdout)?.[1]);
    assert.ok(seconds >= 1 && seconds <= wall, `${seconds} s of ${wall} s: ${r.output}`);
    assert.match(
      section(r.stdout, 'test_overflows'),
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(80 bytes, tail mode\)/,
      r.output,
    );
    assert.match(
      r.stdout,
      /ERROR at setup of test_overflows_in_setup _+\n==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(96 bytes, tail mode\)/,
      r.output,
    );
    assert.match(r.stdout, /^\[mate-guard\] summary: .*, 3 violations, /m, r.output);
    assert.equal(
      r.stdout.match(
        /^\[mate-guard\] 3 processes: a fault on guarded memory ended the one running test_goes_on\.py::test_overflows, test_goes_on\.py::test_overflows_in_setup; pytest went on in a fresh process after each$/gm,
      )?.length,
      1,
      r.output,
    );
    // Every test in the run's junitxml, with its own result.
    const junit = fs.readFileSync(path.join(onDir, 'junit.xml'), 'utf8');
    assert.equal(junit.match(/<testcase /g)?.length, 7, junit);
    const suiteTime = Number(/<testsuite [^>]*time="([\d.]+)"/.exec(junit)?.[1]);
    assert.ok(suiteTime >= 1 && suiteTime <= wall, `testsuite time ${suiteTime} s of ${wall} s: ${junit}`);
    assert.match(
      junit,
      /<testcase classname="test_goes_on" name="test_overflows" [^>]*><failure message="==mate-guard== ERROR: heap-buffer-overflow/,
      junit,
    );
    assert.match(junit, /name="test_overflows_in_setup" [^>]*><error message="failed on setup/, junit);
    // Every report kept in the report folder (both faults' filed by the same
    // pid, and the forked child's), no fork marker left, and the
    // continuation's folder gone with the run.
    assert.equal(
      fs.readdirSync(reports).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f)).length,
      3,
      fs.readdirSync(reports).join(' '),
    );
    assert.deepEqual(
      fs.readdirSync(reports).filter((f) => f.startsWith('mate-guard-forked-')),
      [],
    );
    assert.deepEqual(
      fs
        .readdirSync(os.tmpdir())
        .filter(
          (f) =>
            f.startsWith('mate-pytest-continue-') &&
            fs.statSync(path.join(os.tmpdir(), f)).mtimeMs > Date.now() - 60_000,
        ),
      [],
    );

    // -x: the first fault is the run's first failure, so it stops there.
    const x = await pytest(
      ['--guard-alloc', '--no-guard-rerun', '-x', '-k', 'not before_fails and not forked', 'test_goes_on.py'],
      {},
      onDir,
    );
    assert.equal(x.code, 1, x.output);
    assert.match(x.stdout, /^=+ 1 failed, 1 passed, 2 deselected in /m, x.output);
    assert.doesNotMatch(x.stdout, /the last test ran|test_after_passes/, x.output);
  });

  test("under pytest 7 too (Debian's python3), the run that goes on after a fault reads as one: one session header, one line where the fresh process goes on, each test's result once (-v, and the default progress line), and the whole run's duration in the summary and in junitxml", {
    skip: PYTEST7.skip ?? false,
  }, async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-pytest7-'));
    buildExtension(path.join(FIX, 'badext.c'), d, '_badext', PYTEST7.config);
    fs.copyFileSync(path.join(FIX, 'goes-on', 'test_goes_on_native.py'), path.join(d, 'test_goes_on_native.py'));
    const pytest7 = (args) =>
      run(
        PYTEST7.python,
        [
          '-m',
          'pytest',
          '-p',
          'mate_guard.pytest_plugin',
          '-p',
          'no:cacheprovider',
          '--guard-alloc',
          '--no-guard-rerun',
          ...args,
        ],
        {
          cwd: d,
          env: {
            ...env(),
            PYTHONPATH: `${path.join(ROOT, 'packages', 'python')}:${d}`,
            MATE_PYTEST_GUARD_NATIVE: '*_badext*.so',
          },
          timeout: 120_000,
        },
      );
    const started = Date.now();
    const v = await pytest7(['-v', '--junitxml=junit.xml', 'test_goes_on_native.py']);
    const wall = (Date.now() - started) / 1000;
    assert.equal(v.code, 1, v.output);
    assert.match(v.stdout, /pytest-7\./, v.output);
    assertReadsAsOneRun(v, 'test_goes_on_native.py', 3, [
      ['test_before_passes', 'PASSED'],
      ['test_overflows', 'FAILED', 2],
      ['test_after_passes', 'PASSED'],
    ]);
    const seconds = Number(/^=+ 1 failed, 2 passed in ([\d.]+)s/m.exec(v.stdout)?.[1]);
    assert.ok(seconds >= 1 && seconds <= wall, `${seconds} s of ${wall} s: ${v.output}`);
    const junit = fs.readFileSync(path.join(d, 'junit.xml'), 'utf8');
    const suiteTime = Number(/<testsuite [^>]*time="([\d.]+)"/.exec(junit)?.[1]);
    assert.ok(suiteTime >= 1 && suiteTime <= wall, `testsuite time ${suiteTime} s of ${wall} s: ${junit}`);
    assert.equal(v.stdout.match(/^\[mate-guard\] 2 processes: /gm)?.length, 1, v.output);

    // Without -v: the first process's progress line stops at the fault; the fresh process's line, then its own.
    const q = await pytest7(['test_goes_on_native.py']);
    assert.equal(q.code, 1, q.output);
    assert.equal(q.stdout.match(/=+ test session starts =+/g)?.length, 1, q.output);
    assert.match(
      q.stdout,
      /^collected 3 items\n\ntest_goes_on_native\.py \.\n\[mate-guard\] pytest goes on after a fault on guarded memory in test_goes_on_native\.py::test_overflows \(process 2 of the run, the same command line; the results so far carry over\)\ntest_goes_on_native\.py F\. +\[100%\]\n/m,
      q.output,
    );
    assert.match(q.stdout, /^=+ 1 failed, 2 passed in /m, q.output);
  });

  test('a fault while pytest imports a test module (before any test) ends the session: pytest dies by SIGSEGV, saying under the report that no tests run', async () => {
    const colDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-host-collect-'));
    fs.copyFileSync(path.join(FIX, 'goes-on', 'test_collect_fault.py'), path.join(colDir, 'test_collect_fault.py'));
    const r = await pytest(['--guard-alloc', 'test_collect_fault.py'], {}, colDir);
    assert.equal(r.signal, 'SIGSEGV', r.output);
    assert.match(r.stderr, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/, r.output);
    assert.match(
      r.stderr,
      /\n==mate-guard== pytest ends here: a fault on guarded memory kills the process, and pytest cannot go on in a fresh one from here \(while it collects, after its tests, or started with plugin objects\), so no more tests run and pytest prints no summary \(pytest -n 1, with pytest-xdist, replaces the worker and goes on\)\n/,
      r.output,
    );
  });

  test("an array freed as pytest's call of the test returns: its free stack shows pytest's three innermost frames and counts the rest, not pytest's whole stack", async () => {
    fs.writeFileSync(
      path.join(dir, 'test_freed_on_return.py'),
      'import numpy as np\nimport _badext\n\n\ndef test_damage_freed_on_return():\n    a = np.ones(100, dtype=np.uint8)\n    _badext.write_at(a, -1)\n',
    );
    const r = await pytest(['--guard-alloc', '--no-guard-rerun', 'test_freed_on_return.py']);
    assert.equal(r.code, 1, r.output);
    const freed =
      /==mate-guard== freed at:\n(?:==mate-guard== {3}#.*\n)+==mate-guard== called from Python at:\n((?:==mate-guard== {3}.*\n)+)/.exec(
        section(r.stdout, 'test_damage_freed_on_return'),
      );
    assert.ok(freed, r.output);
    const lines = freed[1].trimEnd().split('\n');
    assert.equal(lines.length, 4, freed[1]);
    assert.match(lines[0], /^==mate-guard== {3}at pytest_pyfunc_call \(\S*_pytest\/python\.py:\d+\)$/, freed[1]);
    assert.match(lines[3], /^==mate-guard== {3}… [1-9]\d* runner frames$/, freed[1]);
  });

  test("views, slices, resize, pickling, fork and shared memory work on guarded arrays; arrays made before install keep numpy's handler; plain python reports damage at the free that finds it (exit status 1) and a fault at the access", async () => {
    const e = env();
    const r = await run('python3', ['script_bugs.py', 'canary'], { cwd: dir, env: e, timeout: 60_000 });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stderr,
      /==mate-guard== 1 violation in this process: exit status 1 \(exit_code; 0 leaves the status alone\)/,
    );
    // The report folder: MATE_GUARD_REPORT_DIR (the setting's environment default), named at exit.
    const reports = e.MATE_GUARD_REPORT_DIR;
    assert.ok(
      r.stderr.includes(
        `==mate-guard== report files (JSON): ${reports} (python -m mate_guard report ${reports} prints them)\n`,
      ),
      r.stderr,
    );
    assert.equal(fs.readdirSync(reports).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f)).length, 1);
    assert.match(r.stdout, /^handlers: mate_guard default_allocator$/m);
    assert.match(r.stdout, /^thread started before install: default_allocator 1 unguarded$/m);
    assert.match(r.stdout, /^arrays work: True$/m);
    assert.match(r.stdout, /^numpy allocations guarded: [1-9]\d*, foreign frees 0$/m);
    assert.match(
      r.stdout,
      /^made before install, freed now: 1; guarded: host memory \(numpy arrays: guarded, \d+ allocations, not guarded: [1-9]\d* made before install \(counted when freed\), 1 made where the handler was not set \(a thread started before install or from C\)\)/m,
    );
    assert.match(
      r.stderr,
      /==mate-guard== ERROR: canary-corruption: 2 bytes before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
    );
    assert.match(r.stderr, /at <module> \(.*script_bugs\.py:\d+\)/);
    const found = r.stderr.indexOf('==mate-guard== ERROR: canary-corruption');
    assert.ok(
      found >= 0 && found < r.stderr.indexOf('after the free\n'),
      `reported at the free that found the damage, not at exit:\n${r.stderr}`,
    );
    const f = await python(['script_bugs.py', 'fault']);
    assert.equal(f.signal, 'SIGSEGV', f.output);
    assert.match(
      f.stderr,
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    );
    assert.match(f.stderr, /#0 write_at .*badext\.c:25/);
  });

  test("arrays made before install (a conftest's) keep numpy's allocator, are freed by it, and the summary counts them; threads started after install make guarded arrays", async () => {
    const r = await run(
      'python3',
      ['-m', 'pytest', '-p', 'mate_guard.pytest_plugin', '-p', 'no:cacheprovider', '-rfs', '--guard-alloc'],
      { cwd: beforeDir, env: env(), timeout: 120_000 },
    );
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /1 passed/, r.output);
    assert.match(
      r.stdout,
      /^\[mate-guard\] guarded: host memory \(numpy arrays: guarded, \d+ allocations, not guarded: 3 made before install \(counted when freed\)\);/m,
      r.output,
    );
    const t = await pytest(['--guard-alloc', 'test_arrays.py::test_clean_threads_guarded']);
    assert.equal(t.code, 0, t.output);
    assert.match(t.stdout, /1 passed/, t.output);
    assert.doesNotMatch(t.stdout, /not guarded: /, "no array was made outside the guard's handler");
  });

  test('without --guard-alloc nothing is guarded: numpy keeps its handler, no summary', async () => {
    const r = await pytest(['-s', '-k', 'clean']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /handler: default_allocator default_allocator/);
    assert.doesNotMatch(r.stdout, /\[mate-guard\]/);
  });

  test("under pytest-xdist a worker's violations reach the controller: canary damage fails its test and is rerun where it faults, a fault kills its worker (the report names the test), and the summary counts both with every worker's arrays", {
    skip: XDIST.skip ?? false,
  }, async () => {
    const r = await pytest(['--guard-alloc', '-n', '2', '-k', 'canary or clean or fault_overflow'], {
      PYTHONPATH: [env().PYTHONPATH, XDIST.path].filter(Boolean).join(':'),
    });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stdout,
      /^FAILED test_arrays\.py::test_canary_before_start - ==mate-guard== ERROR: canary-corruption/m,
      r.output,
    );
    assert.match(r.stdout, /^FAILED test_arrays\.py::test_fault_overflow - worker 'gw\d+' crashed/m, r.output);
    assert.doesNotMatch(r.output, /pytest ends here/, 'a worker is replaced: the run goes on');
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(80 bytes, tail mode\)\n==mate-guard== test: test_arrays\.py::test_fault_overflow\n/,
      r.output,
    );
    assert.match(
      r.stdout,
      /^\[mate-guard\] summary: [1-9]\d* allocations guarded, peak live \d+, 0 unguarded fallbacks, 2 violations, 0 tests skipped by tag$/m,
      r.output,
    );
    // The workers' arrays, not the controller's (which made none).
    assert.match(
      r.stdout,
      /^\[mate-guard\] guarded: host memory \(numpy arrays: guarded, [1-9]\d* allocations[,)]/m,
      r.output,
    );
    assert.match(r.stdout, /^\[mate-guard\] [2-9] worker processes, replaced ones included$/m, r.output);
    // The workers' canary damage is rerun once by the controller, in one process, where the write faults.
    assert.match(
      rerunOf(r, 'test_canary_before_start', '--guard-mode head'),
      /^==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(100 bytes, head mode\)\n==mate-guard== test: test_arrays\.py::test_canary_before_start\n/,
    );
  });
});
