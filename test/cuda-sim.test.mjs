// The settings table reaches the device guard: without a GPU, over the
// simulated CUDA driver (bench/cuda/sim/fake_cuda.cc, built here), the
// example addon's cudaMalloc lands where mode and alignment say, and the
// quarantine bounds apply, given as guard-run flags (the handoff the CUDA
// library and Python processes read) and to installGuardAllocator (the
// Node binding). This proves the plumbing, not the GPU: test/cuda.test.mjs
// runs the real thing on a GPU.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { ROOT, guardRun, run } from './helpers/run.mjs';

const EXAMPLE = path.join(ROOT, 'examples', 'cuda', 'build', 'Release', 'cuda_example.node');
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'cuda', 'sim-settings.js');

function skipReason() {
  if (!fs.existsSync(EXAMPLE)) return 'the CUDA example addon is not built (no nvcc)';
  try {
    execFileSync('g++', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'no g++ to build the simulated driver';
  }
  return false;
}

describe('device settings over the simulated driver', { skip: skipReason() }, () => {
  let env;
  before(() => {
    const lib = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-sim-')), 'libfakecuda.so');
    execFileSync('g++', ['-O2', '-shared', '-fPIC', '-o', lib, path.join(ROOT, 'bench', 'cuda', 'sim', 'fake_cuda.cc')]);
    env = { MATE_GUARD_CUDA_DRIVER: lib, MATE_GUARD_CUPTI: lib };
  });

  const placed = async (flags) => {
    const r = await guardRun(['--device', 'cuda', ...flags], [SCRIPT], { env });
    assert.equal(r.code, 0, r.output);
    return JSON.parse(/^\{.*\}$/m.exec(r.stdout)[0]);
  };

  test('default (tail, alignment 16): the pointer is 16-aligned, its end within 16 bytes of the guard', async () => {
    const p = await placed([]);
    assert.equal(p.offset % 16, 0);
    assert.equal(p.granule - p.offset - p.bytes, 12, JSON.stringify(p));
  });

  test('--alignment 1: the end of the allocation touches the guard', async () => {
    const p = await placed(['--alignment', '1']);
    assert.equal(p.offset + p.bytes, p.granule, JSON.stringify(p));
  });

  test('--mode head: the allocation starts right after the guard', async () => {
    const p = await placed(['--mode', 'head']);
    assert.equal(p.offset, 0, JSON.stringify(p));
  });

  test('quarantineMaxBytes and quarantineMaxCount bound the device quarantine (installGuardAllocator)', async () => {
    const install = (opts) => run(process.execPath, ['-e', `require('@mate-guard/core').installGuardAllocator(${JSON.stringify({ device: 'cuda', ...opts })}); require(${JSON.stringify(SCRIPT)})`], { env });
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
