// A device out-of-memory under the guard is an error with the numbers,
// never a hang: over the simulated driver (packages/core-native/test/sim/, device memory
// bounded by FAKE_CUDA_MEMORY_BYTES), a loop of 1 GiB allocations through
// the C ABI gets the out-of-memory code at once, one out-of-memory report
// with the guard's accounting, and the run is not failed for it; a
// guarded process killed later is not taken for one that never guarded.
// test/cuda.test.mjs runs the PyTorch case (torch.OutOfMemoryError) on a GPU.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { MATE, ROOT, reportOf, run } from './helpers/run.mjs';
import { buildFakeDriver, buildMatrix, noGxx } from './helpers/sim.mjs';

const LIB = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'libmate_guard_cuda.so');

describe('device memory pressure over the simulated driver', { skip: noGxx() }, () => {
  let env;
  let matrix;
  before(() => {
    const fake = buildFakeDriver('mate-sim-oom-');
    matrix = buildMatrix(fake);
    // 8 GiB of device memory.
    env = { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake, FAKE_CUDA_MEMORY_BYTES: String(8 * 2 ** 30) };
  });

  const guarded = (scenario, flags = []) => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-oom-reports-'));
    return run(
      process.execPath,
      [MATE, 'guard-run', '--device', 'cuda', '--report-dir', reports, ...flags, '--', matrix, LIB, scenario],
      { env, timeout: 60_000 },
    );
  };

  test('allocating until the device is full fails at once with the out-of-memory code, one report with the accounting, and a run that is not failed for it', async () => {
    const r = await guarded('oom');
    assert.equal(r.code, 0, r.output);
    // Each 1 GiB allocation holds 513 granules of 2 MiB: 7 fit in 8 GiB.
    assert.match(
      r.stdout,
      /^oom: 7 allocations of 1 GiB, then error 2: CUDA out of memory under mate-guard\. Tried to allocate 1\.00 GiB on device 0 \(total 8\.00 GiB, [\d.]+ MiB free\)\. Guarded: 7 live allocations of 7\.00 GiB hold 7\.01 GiB .*given back before the one retry\./m,
    );
    assert.match(r.stdout, /^oom: again, error 2$/m);
    assert.match(r.stdout, /^oom: after freeing, error 0$/m);
    const text = reportOf(r.output, 'ERROR: out-of-memory');
    assert.match(
      text,
      /ERROR: out-of-memory: a guarded allocation of 1\.00 GiB on device 0 failed: the GPU has [\d.]+ MiB free of 8\.00 GiB/,
    );
    assert.match(
      text,
      /live guarded allocations: 7, 7\.00 GiB asked for, 7\.01 GiB mapped \(guard overhead 14\.0 MiB: each holds whole 2\.0 MiB granules\)/,
    );
    assert.match(text, /before failing it gave back [\d.]+ [KMG]?i?B and retried once/);
    assert.equal((r.output.match(/ERROR: out-of-memory/g) ?? []).length, 1, 'one report, however many failures');
    assert.match(r.output, /\[mate-guard\] summary: \d+ allocations guarded, .*0 violations/);
    assert.match(r.output, /\[mate-guard\] out of memory: 2 device allocations failed for want of GPU memory/);
    assert.doesNotMatch(r.output, /allocation of \d+ bytes failed/, 'no line per attempt');
  });

  test('a guarded process killed before its exit is summed up as killed, not as "no test process was guarded"', async () => {
    const r = await guarded('killed');
    assert.notEqual(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /no test process was guarded/);
    assert.match(
      r.output,
      /\[mate-guard\] warning: 1 guarded process ended without writing its counters at exit \(killed: a time limit, SIGKILL\)/,
    );
  });
});
