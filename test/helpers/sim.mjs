// The simulated CUDA driver and CUPTI (packages/core-native/test/sim/): device features
// tested on a machine with no GPU.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ROOT } from './run.mjs';

/** The simulator's sources, beside the C++ unit tests that also use it. */
const SIM = path.join(ROOT, 'packages', 'core-native', 'test', 'sim');

/** Why the simulator cannot be built here, or false. */
export function noGxx() {
  try {
    execFileSync('g++', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'no g++ to build the simulated driver';
  }
}

/** The fake driver library (fake_cuda.cc), built into a fresh temporary folder. */
export function buildFakeDriver(prefix = 'mate-sim-') {
  const lib = path.join(fs.mkdtempSync(path.join(os.tmpdir(), prefix)), 'libfakecuda.so');
  execFileSync('g++', ['-O2', '-shared', '-fPIC', '-o', lib, path.join(SIM, 'fake_cuda.cc')]);
  return lib;
}

/**
 * The matrix program (matrix.cc: fake kernels launched through the fake CUPTI), beside `lib`; with
 * `linked`, built against `lib` as a program linked with -lcuda is (MATRIX_VIA=link).
 */
export function buildMatrix(lib, { linked = false } = {}) {
  const matrix = path.join(path.dirname(lib), linked ? 'matrix-linked' : 'matrix');
  const link = linked ? ['-DMATRIX_LINKED', lib, `-Wl,-rpath,${path.dirname(lib)}`] : [];
  execFileSync('g++', [
    '-O2',
    '-std=c++17',
    `-I${path.join(ROOT, 'packages', 'core-native', 'include')}`,
    '-o',
    matrix,
    path.join(SIM, 'matrix.cc'),
    ...link,
    '-ldl',
  ]);
  return matrix;
}
