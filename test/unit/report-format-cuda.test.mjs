// The one report formatter on CUDA device events. The fixtures
// (test/fixtures/events/cuda-*.json) were written by the device guard's
// event writer (report/report_event.cc through device/device_report.cc),
// running over packages/core-native/test/sim's simulated driver and CUPTI: the GPU tests
// (test/cuda.test.mjs) check the same text from real kernels.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { formatReport } = await import(path.join(ROOT, 'packages/core-native/dist/report/format.js'));
const event = (name) => JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events', `${name}.json`), 'utf8'));
const lines = (name, edit = (e) => e) =>
  formatReport(edit(event(name)))
    .split('\n')
    .slice(0, -1);

/** A Python call site as the device guard writes it (V8-style frames, innermost first). */
const PYTHON_SITE = [
  '    at run (/usr/lib/python3/dist-packages/triton/runtime/jit.py:612)',
  '    at <lambda> (/usr/lib/python3/dist-packages/triton/runtime/jit.py:390)',
  '    at <module> (/work/triton_overrun.py:19)',
  '',
].join('\n');

test('illegal-address without launch blocking: the launches in flight, newest first, each with its guarded pointer arguments', () => {
  const l = lines('cuda-illegal-address');
  assert.equal(
    l[0],
    '==mate-guard== ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered) on device 0, seen by cuCtxSynchronize',
  );
  assert.equal(
    l[1],
    '==mate-guard== kernels launched since the last synchronize, not known to have finished (2, newest first): one of them made the bad access',
  );
  assert.equal(l[2], '==mate-guard==   (anonymous namespace)::FillInclusive (launch 2 on the default stream)');
  assert.match(
    l[3],
    /^==mate-guard== {5}argument 0 = 0x[0-9a-f]+: allocation #1 \(4000 bytes at 0x[0-9a-f]+, tail mode\)$/,
  );
  assert.equal(l[4], '==mate-guard==   other_kernel (launch 1 on the default stream)');
  assert.match(
    l.at(-1),
    /^==mate-guard== hint: CUDA reports the fault at a later call, with no address: rerun with launch blocking \(--guard-launch-blocking, mate guard-run --launch-blocking\)/,
  );
  // Two suspects: which guard was hit can't be told.
  assert.ok(!l.some((x) => x.includes('hit:')));
});

test('illegal-address with launch blocking: exactly the faulting launch, and the guard it hit when it had one guarded argument', () => {
  const l = lines('cuda-illegal-address-blocking');
  assert.match(l[0], /seen by the synchronize after the launch \(launch blocking\)$/);
  assert.equal(
    l[1],
    '==mate-guard== the kernel that faulted (launch blocking: its own synchronize returned the error):',
  );
  assert.equal(l[2], '==mate-guard==   (anonymous namespace)::FillInclusive (launch 2 on the default stream)');
  assert.equal(
    l[4],
    '==mate-guard== hit: most likely the guard after the end of allocation #1, the only guarded pointer the faulting launch was given (an overrun of it)',
  );
});

test("a launch's call site is its first user frame: installed packages' Python frames are dropped", () => {
  const l = lines('cuda-illegal-address-blocking', (e) => {
    e.launches.list[0].site = PYTHON_SITE;
    e.launches.list[0].test = 'test_kernels.py::test_fill';
    return e;
  });
  assert.equal(l[3], '==mate-guard==     launched at <module> (/work/triton_overrun.py:19)');
  assert.equal(l[4], '==mate-guard==     launched during test: test_kernels.py::test_fill');
});

test('a freed allocation passed to a kernel in flight is named as the likely hit (use after free)', () => {
  const l = lines('cuda-illegal-address', (e) => {
    e.launches.list[1].args[0].allocation.freed = true;
    return e;
  });
  assert.ok(
    l.includes(
      '==mate-guard== hit: most likely the unmapped range of freed allocation #2, passed to other_kernel after it was freed (use after free)',
    ),
    l.join('\n'),
  );
  assert.ok(l.some((x) => x.includes('allocation #2 (64 bytes at 0x') && x.includes('freed: its range is unmapped')));
});

test('launch tracking off: the report says why and lists the guarded allocations live then', () => {
  const l = lines('cuda-illegal-address', (e) => {
    e.launches = { tracking: false, off: 'CUPTI (libcupti.so) was not found', blocking: false, total: 0, list: [] };
    return e;
  });
  assert.equal(
    l[1],
    '==mate-guard== the faulting kernel is not known: launch tracking was off (CUPTI (libcupti.so) was not found)',
  );
  assert.equal(l[2], '==mate-guard== guarded allocations live on device 0 (2 of 2, newest first):');
  assert.match(l[3], /^==mate-guard== {3}#2 \(64 bytes at 0x[0-9a-f]+, tail mode\)$/);
});

test('cross-stream-free: the freeing and the using stream, the use (kernel, launch), the allocation and the fix', () => {
  const l = lines('cuda-cross-stream-free');
  assert.match(
    l[0],
    /^==mate-guard== ERROR: cross-stream-free: allocation #1 \(4000 bytes, tail mode\) freed on stream 0x[0-9a-f]+ while a kernel on stream 0x[0-9a-f]+ used it and the free was not ordered after that use$/,
  );
  assert.equal(l[1], '==mate-guard== the use:');
  assert.match(l[2], /^==mate-guard== {3}\(anonymous namespace\)::UseBuffer \(launch 1 on stream 0x[0-9a-f]+\)$/);
  assert.match(
    l[4],
    /^==mate-guard== allocation #1: 4000 bytes at \[0x[0-9a-f]+, 0x[0-9a-f]+\), tail mode, alignment 16, backend cuda on device 0 \(cuda-vmm\)$/,
  );
  assert.match(
    l.at(-1),
    /^==mate-guard== hint: make stream 0x[0-9a-f]+ wait for stream 0x[0-9a-f]+'s work before freeing .* mate-guard delayed this free until that work was done, so nothing was corrupted in this run$/,
  );
});

test('every line of a device report starts with ==mate-guard==', () => {
  for (const name of ['cuda-illegal-address', 'cuda-illegal-address-blocking', 'cuda-cross-stream-free']) {
    for (const line of lines(name)) assert.ok(line.startsWith('==mate-guard== '), `${name}: ${line}`);
  }
});

test('a pointer a launch was given twice (or in two parameters) is one line', () => {
  const twice = (e) => {
    const [launch] = e.launches.list;
    const [arg] = launch.args;
    return {
      ...e,
      launches: {
        ...e.launches,
        list: [{ ...launch, args: [arg, { ...arg }, { ...arg, param: 2 }] }, ...e.launches.list.slice(1)],
      },
    };
  };
  const l = lines('cuda-illegal-address', twice);
  const argLines = l.slice(
    2,
    l.findIndex((x, i) => i > 2 && !x.startsWith('==mate-guard==     ')),
  );
  assert.equal(argLines.filter((x) => x.includes('allocation #1 ')).length, 1, argLines.join('\n'));
  assert.match(
    argLines.join('\n'),
    /^==mate-guard== {5}arguments 0, 2 = 0x[0-9a-f]+: allocation #1 \(4000 bytes at 0x[0-9a-f]+, tail mode\)$/m,
  );
});

// A foreach optimizer step in flight beside an overrunning kernel: PyTorch's
// multi_tensor_apply_kernel gets its tensors in a by-value struct
// (TensorListMetadata, parameter 0, ~3 KiB) whose unused slots can hold a
// stale address of a freed tensor it never reads.
const foreachBeside = (structArgs) => (e) => {
  const other = e.launches.list[1];
  other.kernel =
    'void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>>(TensorListMetadata<2>, ...)';
  const template = other.args[0];
  other.args = structArgs.map(([offset, freed], i) => ({
    ...template,
    param: 0,
    offset,
    paramSize: 3136,
    allocation: { ...template.allocation, id: 10 + i, freed },
  }));
  other.argCount = other.args.length;
  e.launches.list[0].args[0].paramSize = 8;
  return e;
};

test('a stale address in a by-value struct beside a pointer argument: "two explanations remain", not a guess', () => {
  const l = lines(
    'cuda-illegal-address',
    foreachBeside([
      [0, false],
      [496, true],
    ]),
  );
  const hit = l.find((x) => x.includes('hit:'));
  assert.equal(
    hit,
    "==mate-guard== hit: two explanations remain: the guard after the end of allocation #1, the only pointer passed as an argument (to (anonymous namespace)::FillInclusive) (an overrun of it), or the unmapped range of freed allocation #11, passed to void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>>(TensorListMetadata<2>, ...) after it was freed (inside a by-value struct, parameter 0 at byte 496) (use after free); a struct's stale slot is often never read: launch blocking tells them apart",
  );
});

test('live tensors in a by-value struct rank below the one pointer argument: that guard is the most likely hit', () => {
  const l = lines(
    'cuda-illegal-address',
    foreachBeside([
      [0, false],
      [8, false],
    ]),
  );
  assert.ok(
    l.includes(
      '==mate-guard== hit: most likely the guard after the end of allocation #1, the only pointer passed as an argument (to (anonymous namespace)::FillInclusive) (an overrun of it)',
    ),
    l.join('\n'),
  );
});
