// Python call sites (device/embed/python_site.cc): the walk up a Python
// stack stops a few frames past the user's code instead of walking a fixed
// depth, and walks through a library stack deeper than the caller's limit
// to reach the user's line. Real pytest, the package from the checkout,
// device memory over the simulated driver and numpy arrays through the host
// guard: memory made 21 frames deep inside an installed-style library
// (test/fixtures/python-sites/site-packages/deeplib.py), damaged by the test;
// and a kernel launched through a torch.compile-shaped stack (faketorch.py,
// generated code under torchinductor_u/) that faults, under python -m mate_guard.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildExtension, noExtensionBuild, noLibrary, noNumpy } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';
import { buildFakeDriver, noGxx } from './helpers/sim.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'python-sites');

/** The fixture folder, copied fresh, with cabi.py among its installed-style packages. */
function fixtureCopy(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.cpSync(FIX, dir, { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'python', 'cabi.py'), path.join(dir, 'site-packages', 'cabi.py'));
  return dir;
}

function why() {
  return noNumpy() || noGxx() || noLibrary();
}

/**
 * python3 with `args` in a fresh copy of the fixture folder (named for
 * `name`), over the simulated driver, reports in a fresh folder named by
 * `reportVar`; `prepare(dir)` runs first.
 */
function inFixture(name, args, { env = {}, prepare, reportVar = 'MATE_GUARD_REPORT_DIR', timeout = 60_000 } = {}) {
  const dir = fixtureCopy(`mate-py-sites-${name}-`);
  prepare?.(dir);
  const fake = buildFakeDriver(`mate-sim-sites-${name}-`);
  return run('python3', args, {
    cwd: dir,
    timeout,
    env: {
      PYTHONPATH: [path.join(ROOT, 'packages', 'python'), dir, path.join(dir, 'site-packages')].join(':'),
      MATE_GUARD_CUDA_DRIVER: fake,
      MATE_GUARD_CUPTI: fake,
      [reportVar]: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-sites-reports-')),
      ...env,
    },
  });
}

/** `python -m mate_guard <script>` in a fresh fixture copy (inFixture). */
function guardScript(name, script, opts) {
  return inFixture(name, ['-m', 'mate_guard', script], opts);
}

describe('Python call sites under a deep library stack', { skip: why() }, () => {
  let r;
  const section = (name) => r.stdout.split(new RegExp(`_+ ${name} _+`))[1]?.split(/\n_{5,} /)[0] ?? '';
  before(async () => {
    r = await inFixture(
      'deep',
      [
        '-m',
        'pytest',
        '-p',
        'mate_guard.pytest_plugin',
        '-p',
        'no:cacheprovider',
        '-rfs',
        '--guard-alloc',
        'test_sites.py',
      ],
      { reportVar: 'MATE_PYTEST_GUARD_REPORT_DIR', timeout: 120_000 },
    );
  });

  test("a tensor allocated 22 library frames above the test's line: the report shows that line, and the walk stopped 10 frames below it (32 runner frames, not the 39 of a fixed 40-frame walk)", () => {
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stdout,
      /^FAILED test_sites\.py::test_device_deep_in_a_library - ==mate-guard== ERROR: canary-corruption/m,
      r.output,
    );
    const s = section('test_device_deep_in_a_library');
    assert.match(
      s,
      /allocated at:\n==mate-guard== {3}at test_device_deep_in_a_library \(.*test_sites\.py:10\)\n==mate-guard== {3}… 32 runner frames\n/,
      r.output,
    );
    // The free: cabi.free, the test's line, 10 below it.
    assert.match(
      s,
      /freed at:\n==mate-guard== {3}at test_device_deep_in_a_library \(.*test_sites\.py:12\)\n==mate-guard== {3}… 11 runner frames\n/,
      r.output,
    );
  });

  test("a numpy array made 22 library frames above the test's line, deeper than the host guard's limit (8 frames): the walk goes on to that line and stops there", () => {
    assert.match(
      r.stdout,
      /^FAILED test_sites\.py::test_host_deeper_than_the_host_limit - ==mate-guard== ERROR: canary-corruption/m,
      r.output,
    );
    const s = section('test_host_deeper_than_the_host_limit');
    assert.match(s, /backend host/, r.output);
    assert.match(
      s,
      /at test_host_deeper_than_the_host_limit \(.*test_sites\.py:16\)\n==mate-guard== {3}… 22 runner frames\n/,
      r.output,
    );
  });
});

describe('Python call sites of a torch.compile-shaped launch', { skip: why() }, () => {
  test('a kernel launched from generated code, 7 torch frames below the compiled function and 7 more below its caller: the report names the function, the generated code and the caller', async () => {
    const r = await guardScript('compiled', 'script_compiled.py');
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /ERROR: illegal-address: /, r.output);
    assert.match(
      r.stderr,
      /triton_poi_fused_index_0 \(launch 1 on the default stream\)\n==mate-guard== {5}launched at gather \(\S*script_compiled\.py:16\)\n==mate-guard== {5}through torch\.compile's generated code at call \(\S*torchinductor_u\/ab\/cabcdef\.py:3\), called from main \(\S*script_compiled\.py:21\)\n/,
      r.output,
    );
  });
});

describe('Python call sites on a thread with a Python thread state that runs no Python (autograd-shaped)', {
  skip: why() || noExtensionBuild(),
}, () => {
  test("its allocations while it runs C with the GIL released get no call site without taking the GIL back, and the Python it then runs (a custom backward) is named in that code's report", async () => {
    const r = await guardScript('backward', 'script_backward_thread.py', {
      env: { MATE_GUARD_CUDA_STATS: '1' },
      prepare: (dir) => buildExtension(path.join(dir, 'backward_thread.c'), dir, 'backward_thread'),
    });
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /ERROR: canary-corruption: 4 bytes past the end of allocation #\d+ \(100 bytes/, r.output);
    assert.match(
      r.stderr,
      /allocated at:\n==mate-guard== {3}at backward \(\S*script_backward_thread\.py:21\)\n/,
      r.output,
    );
    // The hint gives a Python user's flags.
    assert.match(
      r.stderr,
      /hint: the write landed in the alignment gap \(alignment 16\): rerun byte-exact to fault at the first bad access \(alignment 1: --guard-alignment=1 for pytest and python -m mate_guard, --alignment 1 for mate guard-run\)\n/,
      r.output,
    );
    // 50 allocations and 50 frees on the thread while it ran no Python.
    assert.match(r.stderr, /no frame 100, 100 of them without the GIL\)/, r.output);
  });
});

describe('Python call sites read from the frames without the GIL', { skip: why() }, () => {
  test("call sites seen before are read from the interpreter's frames once their layout agreed with the C API's walk (3.11-3.14), and a damaged allocation still names the caller it came through", async () => {
    const r = await guardScript('raw', 'script_repeated_sites.py', { env: { MATE_GUARD_CUDA_STATS: '1' } });
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /ERROR: canary-corruption: 1 byte past the end of allocation #\d+ \(100 bytes/, r.output);
    // Round 150's allocation came through second(), not first(): one helper, two stacks.
    assert.match(
      r.stderr,
      /allocated at:\n==mate-guard== {3}at make \(\S*script_repeated_sites\.py:11\)\n==mate-guard== {3}at second \(\S*script_repeated_sites\.py:19\)\n==mate-guard== {3}at <module> \(\S*script_repeated_sites\.py:24\)\n/,
      r.output,
    );
    assert.match(r.stderr, /freed at:\n==mate-guard== {3}at <module> \(\S*script_repeated_sites\.py:27\)\n/, r.output);
    const sites = r.stderr.match(/pySites=(\d+) \(GIL taken back (\d+), new \d+, read from the frames (\d+),/);
    assert.ok(sites, r.output);
    const [all, gil, raw] = sites.slice(1).map(Number);
    assert.equal(all, 800, r.output); // 400 allocations, 400 frees
    const version = (await run('python3', ['-c', 'import sys; print(sys.version_info[1])'])).stdout.trim();
    if (Number(version) >= 11 && Number(version) <= 14) {
      // The first captures take the GIL back, each checking the layout; then nearly all are read.
      assert.ok(
        raw >= 760 && gil <= 40,
        `read from the frames ${raw}, GIL taken back ${gil} (3.${version})\n${r.output}`,
      );
    } else {
      assert.equal(raw, 0, `3.${version} has no known frame layout: ${r.output}`);
    }
  });
});
