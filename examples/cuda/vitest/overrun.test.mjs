// Planted bug: a kernel with `<=` in its bound writes one float past the end
// of a 1000-float buffer. Under the device guard it hits the unmapped guard
// granule; the report names the kernel, its buffer and this test.
import { createRequire } from 'node:module';
import { test } from 'vitest';

const require = createRequire(import.meta.url);
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) test.skip(`CUDA examples skipped: ${noGpu}`, () => {});
else
  test('fillInclusive writes one float past the end', () => {
    const a = cuda.alloc(1000);
    const b = cuda.alloc(1000);
    cuda.fill(b, 1000);
    cuda.fillInclusive(a, 1000);
    cuda.addInto(b, a, 1000);
    cuda.sync();
  });
