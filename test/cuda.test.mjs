// The CUDA device guard. Without a GPU: the settings and what a process
// without a driver says. On a GPU: the example addon's planted kernel bugs
// (examples/cuda: its own cudaMalloc redirected, no code change) under
// `mate guard-run --device cuda` and under each runner, launch attribution
// and the cross-stream-free matrix; and PyTorch (a Triton kernel's overrun,
// the matrix with record_stream). Where no GPU, CUDA toolkit or PyTorch
// exists, each suite skips and says why in one line.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { lineOf } from './helpers/native-frames.mjs';
import { noTorchGpu } from './helpers/python-modules.mjs';
import { MATE, reportLines, run, ROOT } from './helpers/run.mjs';

const require = createRequire(import.meta.url);
const EXAMPLE = path.join(ROOT, 'examples', 'cuda');
// '' where the GPU suites can run (node:test takes an empty string for a skip).
const noGpu = require(path.join(EXAMPLE, 'gpu.js'));
const script = (name) => path.join(EXAMPLE, 'scripts', name);
const fixture = (name) => path.join(ROOT, 'test', 'fixtures', 'cuda', name);

function torchSkip() {
  return noGpu || noTorchGpu();
}

function hasDriver() {
  try {
    execFileSync('sh', ['-c', 'ldconfig -p | grep -q "libcuda.so.1 "'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function hasPython() {
  try {
    execFileSync('python3', ['-c', 'pass'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const guardRun = (flags, command, opts) =>
  run(process.execPath, [MATE, 'guard-run', '--device', 'cuda', ...flags, '--', ...command], opts);
const node = (file, ...args) => [process.execPath, file, ...args];
// Report lines; Jest indents a failing test's message (the report is in it).
const report = (r) =>
  r.output
    .split('\n')
    .map((l) => l.trimStart())
    .filter((l) => l.startsWith('==mate-guard=='))
    .join('\n');

/** Reports of a kind, each as its lines (a report starts at its ERROR line). */
function reports(output, kind) {
  const out = [];
  for (const line of reportLines(output)) {
    if (line.startsWith('==mate-guard== ERROR: ')) out.push([]);
    out.at(-1)?.push(line);
  }
  return out.filter((r) => r[0].startsWith(`==mate-guard== ERROR: ${kind}`)).map((r) => r.join('\n'));
}

/** Which scenarios of a stream-matrix output got a cross-stream-free report, and how many each. */
function matrixCounts(output) {
  const byAddress = new Map();
  for (const m of output.matchAll(/^([a-z-]+): (0x[0-9a-f]+)$/gm)) byAddress.set(BigInt(m[2]), m[1]);
  const counts = {};
  for (const r of reports(output, 'cross-stream-free')) {
    const start = /allocation #\d+: \d+ bytes at \[(0x[0-9a-f]+),/.exec(r);
    assert.ok(start, r);
    const name = byAddress.get(BigInt(start[1])) ?? `unknown ${start[1]}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

const MATRIX = {
  'no-sync': 1,
  'user-waits-on-creation': 1,
  'two-user-streams': 2,
};

describe('the device setting', () => {
  test('guard-run refuses a device other than cuda, naming the flag', async () => {
    const r = await run(process.execPath, [MATE, 'guard-run', '--device', 'rocm', '--', process.execPath, '-e', '0']);
    assert.equal(r.code, 2, r.output);
    assert.match(r.output, /--device: "rocm" is not a device; use cuda/);
  });

  test('without an NVIDIA driver, asking for the device guard fails at install and says why', {
    skip: hasDriver() && 'this machine has an NVIDIA driver',
  }, async () => {
    const r = await guardRun([], [process.execPath, '-e', 'console.log("not reached")']);
    assert.notEqual(r.code, 0, r.output);
    assert.match(
      r.output,
      /mate-guard: device 'cuda': the CUDA driver \(libcuda\.so\.1\) could not be loaded: no NVIDIA driver on this machine/,
    );
    assert.doesNotMatch(r.output, /not reached/);
  });

  test('a Python program that never imports torch is left alone, its own sitecustomize still runs', {
    skip: !hasPython() && 'no python3',
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-site-'));
    fs.writeFileSync(path.join(dir, 'sitecustomize.py'), 'import builtins\nbuiltins.SHADOWED_SITE_RAN = True\n');
    const code = 'import sys, builtins; print("torch" in sys.modules, getattr(builtins, "SHADOWED_SITE_RAN", False))';
    const r = await guardRun([], ['python3', '-c', code], { env: { PYTHONPATH: dir } });
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /^False True$/m);
  });
});

describe('the CUDA example addon under mate guard-run --device cuda', { skip: noGpu || false }, () => {
  test('correct kernels run clean on redirected cudaMalloc and on the C ABI, both guarded', async () => {
    const r = await guardRun([], node(script('clean.js')));
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /sum 2000 guarded true/);
    assert.deepEqual(reportLines(r.output), []);
    assert.match(r.output, /\[mate-guard\] summary: \d+ allocations? guarded, .*0 violations/);
    assert.doesNotMatch(r.output, /launch tracking was off/);
  });

  test('without the guard the one-float overrun goes unnoticed', async () => {
    const r = await run(process.execPath, [script('overrun.js')]);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /sum 2000/);
  });

  test('the overrun kernel, launched among others, faults in tail mode: the report names it and its buffer', async () => {
    const r = await guardRun([], node(script('overrun.js')));
    assert.notEqual(r.code, 0, r.output);
    assert.match(r.output, /CUDA error in sync: an illegal memory access was encountered/);
    const text = report(r);
    assert.match(
      text,
      /ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS \(an illegal memory access was encountered\) on device 0/,
    );
    assert.match(text, /kernels launched since the last synchronize, not known to have finished/);
    assert.match(text, /^==mate-guard== {3}FillInclusive \(launch \d+ on the default stream\)$/m);
    assert.match(text, /launched at .*overrun\.js:17/);
    assert.match(text, /argument 0 = 0x[0-9a-f]+: allocation #\d+ \(4000 bytes at 0x[0-9a-f]+, tail mode\)/);
  });

  test('with launch blocking, exactly the faulting launch is named', async () => {
    const r = await guardRun(['--launch-blocking'], node(script('overrun.js')));
    assert.notEqual(r.code, 0, r.output);
    const text = report(r);
    assert.match(
      text,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}FillInclusive \(launch/,
    );
    assert.doesNotMatch(text, /^==mate-guard== {3}(Fill|AddInto) \(/m);
    assert.match(
      text,
      /hit: most likely the guard after the end of allocation #\d+, the only guarded pointer the faulting launch was given/,
    );
  });

  test('--dump-inputs: the faulting launch lists the inputs saved before it ran; the files hold its buffers as the GPU had them', async () => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-cuda-dump-'));
    const r = await guardRun(
      ['--launch-blocking', '--report-dir', reports, '--dump-inputs', '*Fill*'],
      node(script('overrun.js')),
    );
    assert.notEqual(r.code, 0, r.output);
    const text = report(r);
    assert.match(
      text,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}FillInclusive \(launch/,
    );
    const listed =
      /inputs saved before it ran \(--guard-dump-inputs\):\n==mate-guard== {7}argument 0: allocation #\d+ \(4000 bytes\): (\S+)/.exec(
        text,
      );
    assert.ok(listed, text);
    assert.equal(fs.statSync(listed[1]).size, 4000);
    const [dir] = fs.readdirSync(reports).map((d) => path.join(reports, d));
    const index = fs
      .readdirSync(path.join(dir, 'inputs'))
      .filter((f) => f.startsWith('index-'))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(dir, 'inputs', f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      );
    // Fill (b) and FillInclusive (a): each saved once, whole, with its call site; AddInto does not match.
    assert.deepEqual(
      index.map((e) => [
        /FillInclusive/.test(e.kernel) ? 'FillInclusive' : /Fill/.test(e.kernel) ? 'Fill' : e.kernel,
        e.size,
        e.saved,
        e.truncated,
      ]),
      [
        ['Fill', 4000, 4000, false],
        ['FillInclusive', 4000, 4000, false],
      ],
    );
    assert.match(index[1].site, /overrun\.js:17/);
    assert.equal(path.join(dir, index[1].file), listed[1]);
  });

  test('the overrun in head mode is caught by the canary at free, naming the buffer and its line', async () => {
    const r = await guardRun(['--mode', 'head', '--no-rerun'], node(script('overrun.js')));
    assert.equal(r.code, 1, r.output);
    const text = report(r);
    assert.match(
      text,
      /ERROR: canary-corruption: 4 bytes past the end of allocation #\d+ \(4000 bytes, head mode\) damaged/,
    );
    assert.match(text, /backend cuda on device 0 \(cuda-vmm\)/);
    assert.match(text, /overrun\.js:14/);
  });

  test('the underrun faults in head mode, and the canary catches it in tail mode', async () => {
    const head = await guardRun(['--mode', 'head'], node(script('underrun.js')));
    assert.notEqual(head.code, 0, head.output);
    assert.match(report(head), /ERROR: illegal-address: .* on device 0/);
    assert.match(report(head), /SmoothFromMinusOne/);
    const tail = await guardRun(['--no-rerun'], node(script('underrun.js')));
    assert.equal(tail.code, 1, tail.output);
    assert.match(
      report(tail),
      /ERROR: canary-corruption: \d+ bytes before the start of allocation #\d+ \(4000 bytes, tail mode\) damaged/,
    );
  });

  test('freeing on stream A what a kernel on stream B still uses is reported, naming the use', async () => {
    const r = await guardRun([], node(script('cross-stream.js')));
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /^done$/m);
    const text = report(r);
    assert.match(
      text,
      /ERROR: cross-stream-free: allocation #\d+ \(4000 bytes, tail mode\) freed on stream 0x[0-9a-f]+ while a kernel on stream 0x[0-9a-f]+ used it/,
    );
    assert.match(text, /SlowTouch \(launch \d+ on stream/);
    assert.match(text, /launched at .*cross-stream\.js:15/);
  });

  test('the record_stream matrix: only unordered frees are reported, two user streams twice', async () => {
    const r = await guardRun([], node(script('stream-matrix.js')));
    assert.equal(r.code, 1, r.output);
    assert.deepEqual(matrixCounts(r.output), MATRIX);
  });

  test('graph capture is refused while guarding is on', async () => {
    const r = await guardRun([], node(script('graph-capture.js')));
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /^refused: guard allocator debug mode does not support graph capture$/m);
  });

  test('a legacy CUDA IPC handle of a guarded buffer is refused with the reason, said once; unguarded, the handle is made', async () => {
    const plain = await run(process.execPath, [script('ipc-handle.js')]);
    assert.equal(plain.code, 0, plain.output);
    assert.match(plain.output, /^handle$/m);
    const r = await guardRun([], node(script('ipc-handle.js')));
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.output,
      /^refused: a legacy CUDA IPC handle cannot name a guarded allocation \(guarded ranges are CUDA virtual-memory mappings\); share it through torch\.multiprocessing/m,
    );
    assert.equal((r.output.match(/\[mate-guard\] cudaIpcGetMemHandle refused: /g) ?? []).length, 1, r.output);
  });
});

const RUNNERS = {
  vitest: {
    cmd: (file) => [
      path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs'),
      'run',
      '--guard-device',
      'cuda',
      ...(file ? [file] : []),
    ],
    cwd: path.join(EXAMPLE, 'vitest'),
    file: (name) => `${name}.test.mjs`,
  },
  jest: {
    cmd: (file) => [
      path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js'),
      '--guard-device',
      'cuda',
      '-c',
      path.join(EXAMPLE, 'jest', 'jest.config.js'),
      ...(file ? [file] : []),
    ],
    cwd: ROOT,
    file: (name) => `examples/cuda/jest/${name}.test.js`,
  },
  mocha: {
    cmd: (file) => [
      path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js'),
      '--guard-device',
      'cuda',
      file ?? 'examples/cuda/mocha/kernels.spec.cjs',
    ],
    cwd: ROOT,
    file: (name) => `examples/cuda/mocha/${name}.spec.cjs`,
  },
};

for (const [runner, r] of Object.entries(RUNNERS)) {
  describe(`the CUDA example suite under mate-${runner} --guard-device cuda`, { skip: noGpu || false }, () => {
    const go = (name) => run(process.execPath, r.cmd(name && r.file(name)), { cwd: r.cwd, timeout: 180_000 });

    test('correct kernels pass; the graph-capture test is skipped', async () => {
      const out = await go('kernels');
      assert.equal(out.code, 0, out.output);
      assert.deepEqual(reportLines(out.output), []);
      assert.match(
        out.output,
        /\[mate-guard\] summary: \d+ allocations? guarded, .*0 violations?, 1 test skipped by tag/,
      );
    });

    test('the overrun fails its test with a report naming the kernel, the buffer and the test', async () => {
      const out = await go('overrun');
      assert.notEqual(out.code, 0, out.output);
      const text = report(out);
      assert.match(text, /ERROR: illegal-address/);
      assert.match(text, /FillInclusive/);
      assert.match(text, /allocation #\d+ \(4000 bytes at 0x[0-9a-f]+, tail mode\)/);
      assert.match(text, /test: \S*overrun\.(test|spec)\.c?m?js > fillInclusive writes one float past the end/);
    });

    test('the cross-stream free fails its test with a cross-stream-free report', async () => {
      const out = await go('cross-stream');
      assert.notEqual(out.code, 0, out.output);
      const text = report(out);
      assert.match(text, /ERROR: cross-stream-free: allocation #\d+ \(4000 bytes, tail mode\)/);
      assert.match(text, /test: \S*cross-stream\.(test|spec)\.c?m?js > a buffer used on stream B is freed on stream A/);
    });
  });
}

describe('a device out-of-memory inside a test under mate-node-test --guard-device cuda', {
  skip: noGpu || false,
}, () => {
  const CLI = path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js');
  test('fails that test with the error and one out-of-memory report; the next test runs', async () => {
    const out = await run(process.execPath, [CLI, '--guard-device', 'cuda', fixture('oom.test.cjs')], {
      cwd: ROOT,
      timeout: 180_000,
    });
    assert.notEqual(out.code, 0, out.output);
    assert.match(out.output, /(not ok \d+ - |✖ )a step that allocates 4 GiB blocks until the GPU is full/);
    assert.match(out.output, /(^ok \d+ - |✔ )the next step runs/m);
    // node:test indents a failing test's message: the report is in it.
    assert.equal((out.output.match(/ERROR: out-of-memory/g) ?? []).length, 1, out.output);
    assert.match(out.output, /mate-guard found that the GPU ran out of memory:/);
    const text = report(out);
    assert.match(
      text,
      /ERROR: out-of-memory: a guarded allocation of 4\.00 GiB on device 0 failed: the GPU has [\d.]+ [MG]iB free of [\d.]+ GiB/,
    );
    assert.match(text, /test: \S*oom\.test\.cjs > a step that allocates 4 GiB blocks until the GPU is full/);
    assert.match(out.output, /\[mate-guard\] out of memory: \d+ device allocations? failed for want of GPU memory/);
  });
});

function twoGpuSkip() {
  const no = torchSkip();
  if (no) return no;
  const n = Number(
    execFileSync('python3', ['-c', 'import torch; print(torch.cuda.device_count())'], { encoding: 'utf8' }).trim(),
  );
  return n >= 2 ? false : `${n} GPU: these need two`;
}

describe('one process, two GPUs, under mate guard-run --device cuda', { skip: twoGpuSkip() }, () => {
  const go = (...args) => guardRun([], ['python3', fixture('two_gpus.py'), ...args], { timeout: 300_000 });

  test('copies between the GPUs and kernels reading the other GPU through peer access work as they do plainly, with no report', async () => {
    const r = await go();
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^round trip equal: True$/m);
    assert.match(r.stdout, /^peer copy kernel equal: True$/m);
    assert.match(r.stdout, /^peer Triton kernel equal: True$/m);
    assert.deepEqual(reportLines(r.output), []);
    assert.match(r.output, /\[mate-guard\] summary: \d+ allocations guarded, .*0 violations/);
  });

  test('a one-float overrun on the second GPU still faults there, and the report names device 1', async () => {
    const r = await go('overrun');
    assert.notEqual(r.code, 0, r.output);
    assert.doesNotMatch(r.stdout, /overrun: not caught/);
    assert.match(report(r), /ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS .* on device 1/);
    assert.match(report(r), /fill_inclusive/);
  });
});

describe('a 2-GPU DistributedDataParallel job (torchrun) under mate guard-run --device cuda', {
  skip: twoGpuSkip(),
}, () => {
  const torchrun = (...args) => [
    'python3',
    '-m',
    'torch.distributed.run',
    '--nproc-per-node',
    '2',
    fixture('ddp_train.py'),
    ...args,
  ];

  test('a clean training loop runs clean on both ranks', async () => {
    const r = await guardRun([], torchrun('20'), { timeout: 300_000 });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^20 steps in [\d.]+ s$/m);
    assert.deepEqual(reportLines(r.output), []);
    assert.match(r.output, /\[mate-guard\] summary: \d+ allocations guarded, .*0 violations/);
  });

  test('an overrun on rank 1 beside the foreach optimizer step is named in one step: the rerun with launch blocking pins the Triton kernel, its tensor and the rank', async () => {
    const r = await guardRun([], torchrun('overrun', '20'), { timeout: 600_000 });
    assert.notEqual(r.code, 0, r.output);
    assert.match(
      report(r),
      /ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS .* on device 1 \(rank 1 of 2, local rank 1\)/,
    );
    const pinned = r.output.slice(
      r.output.indexOf('[mate-guard] rerun with launch blocking: the illegal-address on device 1'),
    );
    assert.ok(pinned.length > 0, r.output);
    assert.match(
      pinned,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}fill_inclusive/,
    );
    assert.match(
      pinned,
      /hit: most likely the guard after the end of allocation #\d+, the only guarded pointer the faulting launch was given/,
    );
    // Before the rerun, "most likely" never names the foreach kernel's stale struct slot.
    assert.doesNotMatch(
      report(r),
      /hit: most likely the unmapped range of freed allocation #\d+, passed to \S*multi_tensor_apply/,
    );
  });
});

describe('PyTorch under mate guard-run --device cuda', { skip: torchSkip() }, () => {
  const python = (file, ...args) => ['python3', file, ...args];
  const slow = { timeout: 300_000 };
  const TRITON = {
    alloc: lineOf(fixture('triton_overrun.py'), "x = torch.zeros(N, device='cuda')"),
    launch: lineOf(fixture('triton_overrun.py'), 'fill_inclusive[(1,)]'),
  };

  test('allocating 4 GiB tensors until the GPU is full raises torch.OutOfMemoryError within seconds, with one out-of-memory report; the memory is usable again after', async () => {
    const r = await guardRun([], python(fixture('oom_loop.py')), slow);
    assert.equal(r.code, 0, r.output);
    const m =
      /OutOfMemoryError after (\d+) tensors of 4 GiB in ([\d.]+) s: CUDA out of memory under mate-guard\. Tried to allocate 4\.00 GiB on device 0/.exec(
        r.stdout,
      );
    assert.ok(m, r.output);
    assert.ok(Number(m[1]) > 0 && Number(m[2]) < 60, m[0]);
    assert.match(r.stdout, /^after freeing: sum 1048576$/m);
    assert.equal(reports(r.output, 'out-of-memory').length, 1, r.output);
    assert.match(r.output, /\[mate-guard\] out of memory: \d+ device allocations? failed for want of GPU memory/);
    assert.doesNotMatch(r.output, /no test process was guarded|allocation of \d+ bytes failed/);
  });

  test("a device-side assert in a hand-written Triton kernel is one device-assert report naming the kernel and the user's line", async () => {
    const r = await guardRun([], python(fixture('device_assert.py'), 'triton'), slow);
    assert.notEqual(r.code, 0, r.output);
    assert.doesNotMatch(r.stdout, /not caught/);
    const text = report(r);
    assert.match(
      text,
      /ERROR: device-assert: the GPU reported CUDA_ERROR_ASSERT \(device-side assert triggered\) on device 0/,
    );
    assert.match(
      text,
      new RegExp(
        `checked_copy \\(launch \\d+ on the default stream\\)\n==mate-guard== {5}launched at <module> \\(\\S*device_assert\\.py:${lineOf(fixture('device_assert.py'), 'checked_copy[(1,)]')}\\)`,
      ),
    );
    assert.match(r.output, /\[mate-guard\] summary: .*1 violation,/);
  });

  test("an out-of-bounds gather in a torch.compile'd function: Inductor's assert is reported with its generated kernel, the user's call and the generated code", async () => {
    const r = await guardRun([], python(fixture('device_assert.py'), 'inductor'), slow);
    assert.notEqual(r.code, 0, r.output);
    const text = report(r);
    assert.match(text, /ERROR: device-assert: /);
    assert.match(text, /triton_\w*index\w* \(launch \d+ on the default stream\)/);
    // The compiled function's own line (dynamo keeps its frame), then the generated wrapper and the user's call.
    // (dynamo's frame of the compiled function reports the line it entered at: its def or its body)
    assert.match(text, /launched at gather \(\S*device_assert\.py:\d+\)/);
    assert.match(
      text,
      new RegExp(
        `through torch\\.compile's generated code at call \\(\\S*torchinductor_\\S+\\.py:\\d+\\), called from <module> \\(\\S*device_assert\\.py:${lineOf(fixture('device_assert.py'), 'y = compiled(x, idx)')}\\)`,
      ),
    );
  });

  test("a guarded tensor shared over CUDA IPC (torch.multiprocessing, spawn): the receiver reads and writes the sender's memory and keeps it after the sender frees it; no report", async () => {
    const r = await guardRun([], python(fixture('ipc_share.py'), 'share'), slow);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^receiver got 1000 floats on cuda:0, sum 499500$/m);
    assert.match(r.stdout, /^sender sees x\[0\] = 42$/m);
    assert.match(r.stdout, /^receiver after the sender freed it: sum 499542$/m);
    assert.match(r.stdout, /^receiver exit code 0$/m);
    assert.equal(reportLines(r.output).length, 0, r.output);
    assert.match(
      r.output,
      /\[mate-guard\] CUDA IPC: 1 guarded device allocation shared with another process \(mapped there with its guard; released at free, never reused\)/,
    );
    assert.match(r.output, /\[mate-guard\] summary: .*0 violations/);
  });

  test("a guarded tensor given as a spawned Process's argument is shared over CUDA IPC the same way (its descriptor passed at the spawn)", async () => {
    const r = await guardRun([], python(fixture('ipc_share.py'), 'arg'), slow);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /^receiver got 1000 floats on cuda:0, sum 499500$/m);
    assert.match(r.stdout, /^sender sees x\[0\] = 42$/m);
    assert.match(r.stdout, /^receiver exit code 0$/m);
    assert.equal(reportLines(r.output).length, 0, r.output);
  });

  test('a store one float past a tensor shared over CUDA IPC faults in the receiving process', async () => {
    const r = await guardRun(['--no-rerun'], python(fixture('ipc_share.py'), 'overrun'), slow);
    assert.match(r.stdout, /^receiver got 1000 floats on cuda:0, sum 499500$/m);
    assert.doesNotMatch(r.stdout, /the overrun did not fault/);
    assert.match(r.output, /an illegal memory access was encountered/);
    assert.match(r.stdout, /^receiver exit code 1$/m);
  });

  test('a one-float overrun into the alignment gap of 1001 floats: the canary report, and the rerun with alignment 4 faults at the launch', async () => {
    const r = await guardRun([], python(fixture('triton_overrun.py'), '1001'), slow);
    assert.equal(r.code, 1, r.output);
    const text = report(r);
    assert.match(
      text,
      /ERROR: canary-corruption: 4 bytes past the end of allocation #\d+ \(4004 bytes, tail mode\) damaged/,
    );
    assert.match(
      r.output,
      /\[mate-guard\] rerunning the command in tail mode with alignment 4 to find the access behind a canary report/,
    );
    assert.match(
      r.output,
      /\[mate-guard\] rerun in tail mode with alignment 4: the canary-corruption of allocation #\d+ \(4004 bytes, tail mode\) faults at the first bad access:/,
    );
    const rerun = r.output.slice(r.output.indexOf('rerun in tail mode with alignment 4:'));
    assert.match(
      rerun,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}fill_inclusive/,
    );
  });

  test('a stale address written after `del x` faults in the quarantine, and the report names the freed tensor with the Python lines that allocated and freed it', async () => {
    const STALE = {
      alloc: lineOf(fixture('stale_pointer.py'), "x = torch.zeros(1000, device='cuda')"),
      del: lineOf(fixture('stale_pointer.py'), 'del x'),
      launch: lineOf(fixture('stale_pointer.py'), 'fill_at[(1,)]'),
    };
    const r = await guardRun(['--no-rerun'], python(fixture('stale_pointer.py')), slow);
    assert.notEqual(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /no fault/);
    const text = report(r);
    assert.match(text, /ERROR: illegal-address/);
    assert.match(text, new RegExp(`launched at <module> \\(.*stale_pointer\\.py:${STALE.launch}\\)`));
    // The kernel got a live tensor plus an offset: the freed range is named with its free.
    assert.match(
      text,
      /freed allocations whose ranges are unmapped \(a stale address into one faults; newest first\):\n==mate-guard== {3}#\d+ \(4000 bytes at 0x[0-9a-f]+, tail mode, freed: its range is unmapped\)/,
    );
    assert.match(
      text,
      new RegExp(
        `allocated at <module> \\(.*stale_pointer\\.py:${STALE.alloc}\\)\n==mate-guard== {5}freed at <module> \\(.*stale_pointer\\.py:${STALE.del}\\)`,
      ),
      `the Python stack of the free (del x):\n${text}`,
    );
  });

  test('a Triton one-float overrun is silent with the caching allocator and with caching off', async () => {
    for (const env of [{}, { PYTORCH_NO_CUDA_MEMORY_CACHING: '1' }]) {
      const r = await run('python3', [fixture('triton_overrun.py')], { env, ...slow });
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /sum 1000 neighbour 2000/);
    }
  });

  test('under the guard the Triton overrun is reported with the Triton kernel and the tensor', async () => {
    const r = await guardRun([], python(fixture('triton_overrun.py')), slow);
    assert.notEqual(r.code, 0, r.output);
    assert.match(r.output, /an illegal memory access was encountered/);
    const text = report(r);
    assert.match(text, /ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS/);
    assert.match(text, /fill_inclusive \(launch \d+ on the default stream\)/);
    assert.match(text, new RegExp(`launched at <module> \\(.*triton_overrun\\.py:${TRITON.launch}\\)`));
    assert.match(text, /argument 0 = 0x[0-9a-f]+: allocation #\d+ \(4000 bytes at 0x[0-9a-f]+, tail mode\)/);
  });

  test('with launch blocking the Triton launch is named exactly', async () => {
    const r = await guardRun(['--launch-blocking'], python(fixture('triton_overrun.py')), slow);
    assert.notEqual(r.code, 0, r.output);
    assert.match(
      report(r),
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}fill_inclusive/,
    );
  });

  test('--dump-inputs with launch blocking: the faulting Triton launch lists its saved input, the zeros the tensor held', async () => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-triton-dump-'));
    const r = await guardRun(
      ['--launch-blocking', '--report-dir', reports, '--dump-inputs', 'fill_inclusive'],
      python(fixture('triton_overrun.py')),
      slow,
    );
    assert.notEqual(r.code, 0, r.output);
    const text = report(r);
    assert.match(
      text,
      /the kernel that faulted \(launch blocking: its own synchronize returned the error\):\n==mate-guard== {3}fill_inclusive/,
    );
    const listed =
      /inputs saved before it ran \(--guard-dump-inputs\):\n==mate-guard== {7}argument 0: allocation #\d+ \(4000 bytes\): (\S+)/.exec(
        text,
      );
    assert.ok(listed, text);
    const saved = fs.readFileSync(listed[1]);
    assert.equal(saved.length, 4000);
    assert.ok(
      saved.every((b) => b === 0),
      'torch.zeros: the saved input is 1000 zero floats',
    );
    // The index's call site starts at the user's line; Triton's launcher frames are counted after it.
    const [dir] = fs.readdirSync(reports).map((d) => path.join(reports, d));
    const inputs = path.join(dir, 'inputs');
    const index = fs
      .readdirSync(inputs)
      .filter((f) => f.startsWith('index-'))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(inputs, f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      );
    assert.match(
      index[0].site,
      new RegExp(`^ {4}at <module> \\(\\S*triton_overrun\\.py:${TRITON.launch}\\)\n`),
      index[0].site,
    );
    assert.match(index[0].site, /\(\d+ framework frames? before it: [^)]*triton[^)]*\)\n$/, index[0].site);
  });

  test('in head mode the Triton overrun is caught by the canary, naming the tensor allocation', async () => {
    const r = await guardRun(['--mode', 'head', '--no-rerun'], python(fixture('triton_overrun.py')), slow);
    assert.equal(r.code, 1, r.output);
    const text = report(r);
    assert.match(
      text,
      /ERROR: canary-corruption: 4 bytes past the end of allocation #\d+ \(4000 bytes, head mode\) damaged/,
    );
    assert.match(text, new RegExp(`triton_overrun\\.py:${TRITON.alloc}`));
  });

  test('the record_stream matrix: only unordered frees are reported, two user streams twice', async () => {
    const r = await guardRun([], python(fixture('torch_streams.py')), slow);
    assert.equal(r.code, 1, r.output);
    assert.deepEqual(matrixCounts(r.output), MATRIX);
  });

  test('graph capture is refused while guarding is on', async () => {
    const r = await guardRun([], python(fixture('graph_capture.py')), slow);
    assert.match(r.output, /^refused: guard allocator debug mode does not support graph capture$/m);
  });
});
