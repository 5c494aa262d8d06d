// Planted bug (the record_stream class): a buffer made on stream A is used by
// a kernel on stream B and freed on A without A waiting for B. The device
// guard reports cross-stream-free and holds the free back until B is done.
import { createRequire } from 'node:module';
import { test } from 'vitest';

const require = createRequire(import.meta.url);
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) test.skip(`CUDA examples skipped: ${noGpu}`, () => {});
else
  test('a buffer used on stream B is freed on stream A', () => {
    const A = cuda.createStream();
    const B = cuda.createStream();
    const x = cuda.alloc(1000, A);
    cuda.fill(x, 1000, A);
    cuda.waitFor(B, A);
    cuda.slowTouch(x, 2000, B);
    cuda.free(x, A);
    cuda.sync();
  });
