// The settings table reaches the device guard: without a GPU, over the
// simulated CUDA driver (packages/core-native/test/sim/fake_cuda.cc, built here), the
// example addon's cudaMalloc lands where mode and alignment say, and the
// quarantine bounds apply, given as guard-run flags (the handoff the CUDA
// library and Python processes read) and to installGuardAllocator (the
// Node binding). This proves the plumbing, not the GPU: test/cuda.test.mjs
// runs the real thing on a GPU.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { MATE, ROOT, guardRun, reportOf, run } from './helpers/run.mjs';
import { buildFakeDriver, buildMatrix, noGxx } from './helpers/sim.mjs';

const EXAMPLE = path.join(ROOT, 'examples', 'cuda', 'build', 'Release', 'cuda_example.node');
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'cuda', 'sim-settings.js');

const LIB = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'libmate_guard_cuda.so');

/** The simulated driver and packages/core-native/test/sim/matrix.cc built for a describe block (before its tests). */
function simMatrix(prefix) {
  const sim = { env: null, matrix: null };
  before(() => {
    const fake = buildFakeDriver(prefix);
    sim.matrix = buildMatrix(fake);
    sim.env = { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake };
  });
  return sim;
}

function hasPython3() {
  return spawnSync('python3', ['--version']).status === 0;
}

function skipReason() {
  if (!fs.existsSync(EXAMPLE)) return 'the CUDA example addon is not built (no nvcc)';
  return noGxx();
}

describe('device settings over the simulated driver', { skip: skipReason() }, () => {
  let env;
  before(() => {
    const lib = buildFakeDriver();
    env = { MATE_GUARD_CUDA_DRIVER: lib, MATE_GUARD_CUPTI: lib };
  });

  const placed = async (flags) => {
    const r = await guardRun(['--device', 'cuda', ...flags], [SCRIPT], { env });
    assert.equal(r.code, 0, r.output);
    return JSON.parse(/^\{.*\}$/m.exec(r.stdout)[0]);
  };

  test('the bench settings that skip device canary I/O or unmapping say so: a run never loses a detection silently', async () => {
    const r = await guardRun(['--device', 'cuda'], [SCRIPT], { env: { ...env, MATE_GUARD_CUDA_SKIP: 'canary' } });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /warning: MATE_GUARD_CUDA_SKIP=canary \(a bench setting\): device canaries are not checked/);
    const recycled = await guardRun(['--device', 'cuda'], [SCRIPT], { env: { ...env, MATE_GUARD_CUDA_SKIP: 'unmap' } });
    assert.equal(recycled.code, 0, recycled.output);
    assert.match(
      recycled.output,
      /warning: MATE_GUARD_CUDA_SKIP=unmap \(a bench setting\): freed device ranges go back out still mapped/,
    );
    // Strict quarantine unmaps every freed range whatever the bench asks: nothing to warn of.
    const strict = await guardRun(['--device', 'cuda', '--cuda-quarantine', 'strict'], [SCRIPT], {
      env: { ...env, MATE_GUARD_CUDA_SKIP: 'unmap' },
    });
    assert.equal(strict.code, 0, strict.output);
    assert.doesNotMatch(strict.output, /MATE_GUARD_CUDA_SKIP/);
    const plain = await guardRun(['--device', 'cuda'], [SCRIPT], { env });
    assert.doesNotMatch(plain.output, /MATE_GUARD_CUDA_SKIP/);
  });

  test('default (tail, alignment 16): the pointer is 16-aligned, its end within 16 bytes of the guard', async () => {
    const p = await placed([]);
    assert.equal(p.offset % 16, 0);
    assert.equal(p.granule - p.offset - p.bytes, 12, JSON.stringify(p));
  });

  test('--alignment 1: the end of the allocation touches the guard', async () => {
    const p = await placed(['--alignment', '1']);
    assert.equal(p.offset + p.bytes, p.granule, JSON.stringify(p));
  });

  test("--device-exact-placement: a device allocation's last byte touches the guard (a read one element past a tensor faults)", async () => {
    const p = await placed(['--device-exact-placement']);
    assert.equal(p.granule - p.offset - p.bytes, 0, JSON.stringify(p));
  });

  test('--exact-placement (host byte buffers only) leaves device allocations aligned', async () => {
    const p = await placed(['--exact-placement']);
    assert.equal(p.offset % 16, 0, JSON.stringify(p));
    assert.equal(p.granule - p.offset - p.bytes, 12, JSON.stringify(p));
  });

  test('--mode head: the allocation starts right after the guard', async () => {
    const p = await placed(['--mode', 'head']);
    assert.equal(p.offset, 0, JSON.stringify(p));
  });

  test('the torch hook shares a guarded storage over CUDA IPC (a stand-in torch): a storage the guard did not allocate is refused with the reason; a guarded one is rebuilt elsewhere over the same bytes', {
    skip: hasPython3() ? false : 'no python3',
  }, async () => {
    const probe = path.join(ROOT, 'test', 'fixtures', 'cuda', 'sim-ipc', 'ipc_probe.py');
    const r = await run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--', 'python3', probe], {
      env,
      cwd: os.tmpdir(),
    });
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.stdout,
      /^refused: mate-guard: this CUDA tensor cannot be shared with another process \(CUDA IPC, as torch\.multiprocessing does\): the guard did not allocate it \(an unguarded fallback, or memory another process shared\)/m,
    );
    assert.match(r.stdout, /^shared: device 0, GuardedIpcHandle, 4000 bytes$/m);
    assert.match(r.stdout, /^rebuilt elsewhere: True, first byte 7, last byte 7$/m);
    assert.match(r.stdout, /^the sender sees 9$/m);
    assert.match(r.stdout, /^after the view is dropped the sender still reads 9$/m);
    assert.match(r.output, /\[mate-guard\] CUDA IPC: 1 guarded device allocation shared with another process/);
  });

  test('quarantineMaxBytes and quarantineMaxCount bound the device quarantine (installGuardAllocator)', async () => {
    const install = (opts) =>
      run(
        process.execPath,
        [
          '-e',
          `require('@mate-guard/core').installGuardAllocator(${JSON.stringify({ device: 'cuda', ...opts })}); require(${JSON.stringify(SCRIPT)})`,
        ],
        { env },
      );
    const kept = await install({});
    assert.equal(kept.code, 0, kept.output);
    assert.equal(JSON.parse(/^\{.*\}$/m.exec(kept.stdout)[0]).quarantined, 1, kept.output);
    for (const opts of [{ quarantineMaxBytes: 0 }, { quarantineMaxCount: 0 }]) {
      const r = await install(opts);
      assert.equal(r.code, 0, r.output);
      assert.equal(JSON.parse(/^\{.*\}$/m.exec(r.stdout)[0]).quarantined, 0, `${JSON.stringify(opts)}: ${r.output}`);
    }
  });
});

// --guard-dump-inputs over the simulated driver and CUPTI: packages/core-native/test/sim/
// matrix.cc launches fake kernels through the fake CUPTI's callbacks, the
// way the driver reports a real launch (entry, then exit).
describe('--dump-inputs over the simulated driver', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-dump-');

  const runMatrix = async (flags, scenario) => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-dump-reports-'));
    const r = await run(
      process.execPath,
      [MATE, 'guard-run', '--device', 'cuda', '--report-dir', reports, ...flags, '--', sim.matrix, LIB, scenario],
      { env: sim.env },
    );
    const [dir] = fs.readdirSync(reports).map((d) => path.join(reports, d));
    const inputs = path.join(dir, 'inputs');
    const index = fs.existsSync(inputs)
      ? fs
          .readdirSync(inputs)
          .filter((f) => f.startsWith('index-'))
          .flatMap((f) =>
            fs
              .readFileSync(path.join(inputs, f), 'utf8')
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l)),
          )
      : [];
    return { ...r, dir, index };
  };

  test('an illegal-address report lists the saved inputs of the matching suspect launch; the file holds what the GPU had', async () => {
    const r = await runMatrix(['--dump-inputs', '*FillInclusive*'], 'fault');
    assert.equal(r.code, 1, r.output);
    // Only the matching kernel's input is saved (other_kernel's is not), once, with its launch and kernel.
    assert.equal(r.index.length, 1, JSON.stringify(r.index));
    const [entry] = r.index;
    assert.equal(entry.kernel, '_ZN12_GLOBAL__N_113FillInclusiveEPfl');
    assert.equal(entry.launch, 2);
    assert.equal(entry.size, 4000);
    assert.equal(entry.saved, 4000);
    assert.equal(entry.truncated, false);
    const saved = fs.readFileSync(path.join(r.dir, entry.file));
    assert.equal(saved.length, 4000);
    assert.ok(
      saved.every((b) => b === 0x5a),
      'the saved bytes are those the program wrote before the launch',
    );
    const report = reportOf(r.output, 'ERROR: illegal-address');
    assert.match(
      report,
      /FillInclusive \(launch 2 on the default stream\)\n.*\n==mate-guard==     inputs saved before it ran \(--guard-dump-inputs\):\n==mate-guard==       argument 0: allocation #1 \(4000 bytes\): (\S+)/,
    );
    const listed = /argument 0: allocation #1 \(4000 bytes\): (\S+)/.exec(report)[1];
    assert.equal(listed, path.join(r.dir, entry.file));
    // other_kernel did not match: no inputs line under it.
    assert.doesNotMatch(report.split('other_kernel')[1], /inputs saved/);
  });

  test('without the flag nothing is saved; a large input is saved truncated to the 16 MiB cap, marked so', async () => {
    const off = await runMatrix([], 'fault');
    assert.equal(off.code, 1, off.output);
    assert.equal(fs.existsSync(path.join(off.dir, 'inputs')), false);
    assert.doesNotMatch(off.output, /inputs saved/);
    const big = await runMatrix(['--dump-inputs', '*FillInclusive*'], 'dump-cap');
    assert.equal(big.code, 0, big.output);
    assert.equal(big.index.length, 1, JSON.stringify(big.index));
    assert.equal(big.index[0].size, 17 * 2 ** 20);
    assert.equal(big.index[0].saved, 16 * 2 ** 20);
    assert.equal(big.index[0].truncated, true);
    assert.equal(fs.statSync(path.join(big.dir, big.index[0].file)).size, 16 * 2 ** 20);
  });

  test('a glob may name the kernel demangled, as reports show it; under launch blocking without it, the hint gives the glob for the faulting kernel', async () => {
    const demangled = await runMatrix(['--dump-inputs', '*::FillInclusive(*'], 'fault');
    assert.equal(demangled.code, 1, demangled.output);
    assert.deepEqual(
      demangled.index.map((e) => [e.launch, e.allocation, e.saved]),
      [[2, 1, 4000]],
    );
    const blocking = await runMatrix(['--launch-blocking'], 'fault-blocking');
    assert.equal(blocking.code, 1, blocking.output);
    assert.match(
      reportOf(blocking.output, 'ERROR: illegal-address'),
      /hint: CUDA reports no faulting address: .*check its index bounds \(--guard-dump-inputs '\*FillInclusive\*' saves its inputs before each launch, to run it alone on them\)$/m,
    );
  });

  test('a bad --dump-inputs value stops guard-run with one line, exit 2', async () => {
    const r = await run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--dump-inputs', '', '--', 'true'], {
      env: sim.env,
    });
    assert.equal(r.code, 2, r.output);
    assert.match(r.stderr, /^mate: --dump-inputs: "" is not a kernel glob; use a non-empty kernel glob\n$/);
  });

  test('with --device cuda the CUDA settings a run without it refuses are taken: the run goes on', async () => {
    const cuda = ['--launch-blocking', '--dump-inputs', '*k*', '--cuda-quarantine', 'strict', '--sync-on-free'];
    const args = ['guard-run', '--device', 'cuda', ...cuda, '--device-exact-placement', '--'];
    const r = await run(process.execPath, [MATE, ...args, process.execPath, '-e', '0'], { env: sim.env });
    assert.equal(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /needs the device guard/);
  });
});

// Every kernel exception is reported, not only an illegal address: a
// device-side assert (an index check, as Inductor's generated kernels make)
// names the launches in flight; a multi-process job's report names its rank.
describe('kernel exceptions over the simulated driver', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-assert-');
  const go = (scenario, extraEnv = {}) =>
    run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--', sim.matrix, LIB, scenario], {
      env: { ...sim.env, ...extraEnv },
    });

  test('a device-side assert is one device-assert report naming the launches in flight; the run fails', async () => {
    const r = await go('assert');
    assert.equal(r.code, 1, r.output);
    const text = reportOf(r.output, 'ERROR: device-assert');
    assert.match(
      text,
      /ERROR: device-assert: the GPU reported CUDA_ERROR_ASSERT \(device-side assert triggered\) on device 0, seen by /,
    );
    assert.match(
      text,
      /kernels launched since the last synchronize, not known to have finished \(2, newest first\): one of them raised it/,
    );
    assert.match(text, /FillInclusive/);
    assert.match(text, /hint: a device-side assert failed \(an index or bounds check in the kernel/);
    assert.doesNotMatch(text, /hit: /, 'an assert is no guard hit');
    assert.match(r.output, /\[mate-guard\] summary: .*1 violation,/);
  });

  test('a kernel fault found without launch blocking reruns the command with it, which names the launch, its argument and the guard it hit', async () => {
    const r = await go('kernel-fault', { FAKE_CUDA_FAULT_KERNEL: 'FillInclusive' });
    assert.equal(r.code, 1, r.output);
    const first = reportOf(r.output, 'ERROR: illegal-address');
    assert.match(first, /kernels launched since the last synchronize, not known to have finished \(2, newest first\)/);
    assert.match(
      r.output,
      /^\[mate-guard\] rerunning the command in launch blocking to name the launch behind the illegal-address report \(off: --no-rerun\)$/m,
    );
    const after = r.output.slice(
      r.output.indexOf("[mate-guard] rerun with launch blocking: the illegal-address on device 0 is this launch's:"),
    );
    assert.ok(after.length > 0, r.output);
    assert.match(
      after,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}\(anonymous namespace\)::FillInclusive/,
    );
    assert.match(
      after,
      /hit: most likely the guard after the end of allocation #1, the only guarded pointer the faulting launch was given/,
    );
    const off = await run(
      process.execPath,
      [MATE, 'guard-run', '--device', 'cuda', '--no-rerun', '--', sim.matrix, LIB, 'kernel-fault'],
      { env: { ...sim.env, FAKE_CUDA_FAULT_KERNEL: 'FillInclusive' } },
    );
    assert.equal(off.code, 1, off.output);
    assert.doesNotMatch(off.output, /\[mate-guard\] rerun/);
  });

  test('a report of a multi-process job names its rank, local rank and world size', async () => {
    const r = await go('fault', { RANK: '1', LOCAL_RANK: '1', WORLD_SIZE: '2' });
    assert.equal(r.code, 1, r.output);
    assert.match(reportOf(r.output, 'ERROR: illegal-address'), /on device 0 \(rank 1 of 2, local rank 1\), seen by /);
  });
});

// Without CUPTI (not installed, or a profiler holds it) launches are seen
// through the driver's functions as the program looks them up (dlsym and
// cuGetProcAddress, as the CUDA runtime, cuBLAS, NCCL and Triton do):
// matrix.cc with MATRIX_VIA=driver finds them that way.
describe('launch tracking without CUPTI over the simulated driver', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-nocupti-');
  // The matrix program (or `program`) guarded with no CUPTI to be found.
  const go = (scenario, extraEnv = {}, program = sim.matrix) =>
    run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--', program, LIB, scenario], {
      env: { ...sim.env, MATE_GUARD_CUPTI: path.join(os.tmpdir(), 'no-such-libcupti.so'), ...extraEnv },
    });
  // What the matrix's scenarios report (as with CUPTI): #1, #2 and #7 twice.
  const MATRIX_FREES = [
    'ERROR: cross-stream-free: allocation #1',
    'ERROR: cross-stream-free: allocation #2',
    'ERROR: cross-stream-free: allocation #7',
    'ERROR: cross-stream-free: allocation #7',
  ];
  const frees = (output) => (output.match(/ERROR: cross-stream-free: allocation #\d+/g) ?? []).sort();

  test('the launches, event records, waits and synchronizes a program looks up are tracked: the cross-stream matrix reports what it reports with CUPTI', async () => {
    const r = await go('all', { MATRIX_VIA: 'driver' });
    assert.equal(r.code, 1, r.output);
    const withCupti = await run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--', sim.matrix, LIB], {
      env: sim.env,
    });
    assert.deepEqual(frees(r.output), frees(withCupti.output), r.output);
    assert.deepEqual(frees(r.output), MATRIX_FREES);
    assert.match(
      reportOf(r.output, 'ERROR: cross-stream-free'),
      /\(anonymous namespace\)::UseBuffer \(launch 1 on stream/,
    );
    assert.doesNotMatch(r.output, /launch tracking was off/);
  });

  test('with a profiler holding CUPTI, launches are tracked the same way', async () => {
    const r = await go('all', {
      MATRIX_VIA: 'driver',
      MATE_GUARD_CUPTI: sim.env.MATE_GUARD_CUPTI,
      FAKE_CUPTI_BUSY: '1',
    });
    assert.equal(r.code, 1, r.output);
    assert.deepEqual(frees(r.output), MATRIX_FREES);
    assert.doesNotMatch(r.output, /launch tracking was off/);
  });

  test('a kernel fault names the kernel in flight, and the launch-blocking rerun the launch that faulted', async () => {
    const r = await go('kernel-fault', { MATRIX_VIA: 'driver', FAKE_CUDA_FAULT_KERNEL: 'FillInclusive' });
    assert.equal(r.code, 1, r.output);
    assert.match(reportOf(r.output, 'ERROR: illegal-address'), /FillInclusive \(launch \d+ on the default stream\)/);
    assert.match(
      r.output,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}\(anonymous namespace\)::FillInclusive/,
    );
  });

  test("a program linked with the driver (-lcuda) has its imports of the driver's functions tracked the same", async () => {
    const linked = buildMatrix(sim.env.MATE_GUARD_CUDA_DRIVER, { linked: true });
    const r = await go('all', { MATRIX_VIA: 'link' }, linked);
    assert.equal(r.code, 1, r.output);
    assert.deepEqual(frees(r.output), MATRIX_FREES);
  });

  test('a stream wait the driver answers with a function the guard does not know leaves cross-stream frees unreported, never reported falsely', async () => {
    const r = await go('all', { MATRIX_VIA: 'driver', FAKE_CUDA_UNKNOWN_WAIT: '1' });
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(frees(r.output), []);
  });

  test('calls the program did not look up are not seen, and nothing is reported of them', async () => {
    const r = await go('all');
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(frees(r.output), []);
  });

  test('when CUDA was used before the guard came, the run says once that launch tracking was off, and why', async () => {
    const r = await go('all', { MATRIX_VIA: 'driver', FAKE_CUDA_CONTEXT_ACTIVE: '1' });
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(frees(r.output), []);
    assert.equal((r.output.match(/launch tracking was off/g) ?? []).length, 1, r.output);
    assert.match(
      r.output,
      /CUPTI .* was not found; nor could launches be seen without it \(a CUDA context existed before tracking started\)/,
    );
  });
});

// The tracker notes a launch's pointers in batches (one allocator lock
// each): a word past the first batch is a use as much as the first one.
describe('launch tracking over the simulated driver', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-track-');

  test('every one of 40 pointers a launch passes in one struct is a use: the 40th freed on another stream unordered is a cross-stream free, the rest freed after a synchronize are not', async () => {
    const r = await run(
      process.execPath,
      [MATE, 'guard-run', '--device', 'cuda', '--', sim.matrix, LIB, 'many-pointers'],
      { env: sim.env },
    );
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /many-pointers: freed the rest/);
    const text = reportOf(r.output, 'ERROR: cross-stream-free');
    assert.match(
      text,
      /ERROR: cross-stream-free: allocation #40 \(256 bytes, tail mode\) freed on stream 0x[0-9a-f]+ while a kernel on stream 0x[0-9a-f]+ used it/,
    );
    assert.match(text, /\(anonymous namespace\)::ManyPointers \(launch 1 on stream/);
    assert.match(text, /… 32 more guarded pointer arguments/);
    assert.equal(r.output.match(/ERROR: cross-stream-free/g).length, 1, r.output);
    assert.match(r.output, /\[mate-guard\] summary: 40 allocations guarded, .*1 violation,/);
  });

  test("launch 4097 reuses launch 1's entry of the 4096-entry log: its report lists its own one argument, not launch 1's three or the inputs saved before launch 1", async () => {
    const r = await run(
      process.execPath,
      [
        MATE,
        'guard-run',
        '--device',
        'cuda',
        '--no-rerun',
        '--dump-inputs',
        '*three_pointers*',
        '--',
        sim.matrix,
        LIB,
        'wrap',
      ],
      { env: sim.env },
    );
    assert.equal(r.code, 1, r.output);
    const text = reportOf(r.output, 'ERROR: illegal-address');
    assert.match(text, /not known to have finished \(1, newest first\)/);
    assert.match(
      text,
      /\(anonymous namespace\)::FillInclusive \(launch 4097 on the default stream\)\n==mate-guard== {5}argument 0 = 0x[0-9a-f]+: allocation #3 \(4000 bytes/,
    );
    assert.doesNotMatch(text, /argument 1|allocation #1|allocation #2/);
    assert.doesNotMatch(text, /inputs saved before it ran/);
  });
});

// The device allocator's background thread (mapping ahead, fences,
// unmapping) carries a name, so a user's `top -H`, perf or gdb tells it
// from the program's own threads.
describe("the device guard's own thread over the simulated driver", { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-threads-');

  test("the background thread is named mate-guard-cuda; the program's main thread keeps its name", async () => {
    const r = await run(
      process.execPath,
      [MATE, 'guard-run', '--device', 'cuda', '--', sim.matrix, LIB, 'thread-names'],
      { env: sim.env },
    );
    assert.equal(r.code, 0, r.output);
    const names = /^threads:(.*)$/m.exec(r.output)?.[1].trim().split(/\s+/) ?? [];
    assert.ok(names.includes('mate-guard-cuda'), r.output);
    assert.equal(names[0], path.basename(sim.matrix).slice(0, 15), r.output);
  });
});

// A matrix scenario under `mate guard-run --device cuda`.
function guardScenario(sim, scenario, extra) {
  return run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', '--', sim.matrix, LIB, scenario], {
    env: { ...sim.env, ...extra },
  });
}

// A matrix scenario with the counters on: the launches recorded, the
// program's launch calls (each timed: launchCallMs), the output.
async function launchCounts(sim, scenario, extra) {
  const r = await guardScenario(sim, scenario, { MATE_GUARD_CUDA_STATS: '1', ...extra });
  assert.equal(r.code, 0, r.output);
  const launches = /cuda stats: .*\blaunches=(\d+) .*\blaunchCallMs=[0-9.]+ .*\bcallbacks=(\d+) launches,/.exec(
    r.output,
  );
  assert.ok(launches, r.output);
  return { recorded: Number(launches[1]), calls: Number(launches[2]), output: r.output };
}

// The bench's MATE_GUARD_CUPTI_EMPTY (bench/cuda: CUPTI's mechanism alone):
// callbacks that track nothing, and with the counters on the program's
// launch calls still counted and timed, to set beside a tracked run's.
describe('the empty-callback bench setting over the simulated CUPTI', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-empty-');
  const counters = async (extra) => {
    const { recorded, calls } = await launchCounts(sim, 'dump-cap', extra);
    return { recorded, calls };
  };

  test("records no launch, yet counts the program's launch calls as a tracked run does (their time beside a tracked run's)", async () => {
    assert.deepEqual(await counters({}), { recorded: 1, calls: 1 });
    assert.deepEqual(await counters({ MATE_GUARD_CUPTI_EMPTY: '1' }), { recorded: 0, calls: 1 });
  });
});

// The bench's MATE_GUARD_TRACK_ALTERNATE_MS (bench/cuda/ddp.sh guard-alternate):
// launches recorded in every other period of the monotonic clock only, so
// one run times its steps tracked and untracked side by side.
describe('the alternating-record bench setting over the simulated CUPTI', { skip: noGxx() }, () => {
  const sim = simMatrix('mate-sim-alternate-');
  const paced = async (extra) => {
    const counts = await launchCounts(sim, 'paced', extra);
    assert.match(counts.output, /paced: launched/);
    return counts;
  };

  test('records the launches of every other period only, and says so at start', async () => {
    const all = await paced({});
    assert.deepEqual([all.recorded, all.calls], [12, 12]);
    assert.doesNotMatch(all.output, /ALTERNATE_MS/);
    // 30 ms apart in 20 ms periods: 360 ms span both parities.
    const half = await paced({ MATE_GUARD_TRACK_ALTERNATE_MS: '20' });
    assert.equal(half.calls, 12);
    assert.ok(half.recorded > 0 && half.recorded < 12, `recorded ${half.recorded} of 12`);
    assert.match(
      half.output,
      /warning: MATE_GUARD_TRACK_ALTERNATE_MS=20 \(a bench setting\): launches are recorded in every other 20 ms only/,
    );
  });

  test('with ",all", every call of every other period is dropped, and it says so at start', async () => {
    const half = await paced({ MATE_GUARD_TRACK_ALTERNATE_MS: '20,all' });
    assert.equal(half.calls, 12);
    assert.ok(half.recorded > 0 && half.recorded < 12, `recorded ${half.recorded} of 12`);
    assert.match(
      half.output,
      /warning: MATE_GUARD_TRACK_ALTERNATE_MS=20,all \(a bench setting\): driver calls are tracked \(cross-stream frees checked until an ordering call is dropped\) in every other 20 ms only/,
    );
  });

  test('a period that is not a whole number of milliseconds is named and ignored', async () => {
    for (const value of ['0.5', '20,some']) {
      const bad = await paced({ MATE_GUARD_TRACK_ALTERNATE_MS: value });
      assert.deepEqual([bad.recorded, bad.calls], [12, 12]);
      assert.ok(
        bad.output.includes(
          `MATE_GUARD_TRACK_ALTERNATE_MS=${value} is not a whole number of milliseconds from 1 to 3600000 (optionally followed by ",all"); ignored`,
        ),
        bad.output,
      );
    }
  });

  // A launch on B in a tracked period, the free on A in the next one.
  const crossFrees = async (scenario, extra) => {
    const r = await guardScenario(sim, scenario, extra);
    assert.match(r.output, new RegExp(`${scenario}: freed`), r.output);
    return (r.output.match(/ERROR: cross-stream-free/g) ?? []).length;
  };

  test('with ",all", an event wait dropped in the period between the launch and the free never makes the free a cross-stream free', async () => {
    assert.equal(await crossFrees('alternate-ordered', {}), 0);
    assert.equal(await crossFrees('alternate-ordered', { MATE_GUARD_TRACK_ALTERNATE_MS: '50,all' }), 0);
    // The same through the import front-end (the driver's functions handed out wrapped).
    const imports = { MATRIX_VIA: 'driver', MATE_GUARD_TRACK_VIA: 'imports' };
    assert.equal(await crossFrees('alternate-ordered', { ...imports, MATE_GUARD_TRACK_ALTERNATE_MS: '50,all' }), 0);
    assert.equal(await crossFrees('alternate-unordered', { ...imports, MATE_GUARD_TRACK_ALTERNATE_MS: '50,all' }), 1);
  });

  test('with ",all", a free ordered after nothing is still a cross-stream free until an ordering call is dropped, and goes unreported after (a bench setting may miss one, never invent one)', async () => {
    assert.equal(await crossFrees('alternate-unordered', { MATE_GUARD_TRACK_ALTERNATE_MS: '50,all' }), 1);
    assert.equal(await crossFrees('alternate-unrelated', { MATE_GUARD_TRACK_ALTERNATE_MS: '50' }), 1);
    assert.equal(await crossFrees('alternate-unrelated', { MATE_GUARD_TRACK_ALTERNATE_MS: '50,all' }), 0);
  });
});
