// Correct kernels on device memory from the addon's own cudaMalloc, which
// the device guard redirects (no code change); graph capture is refused
// while guarding is on, so that test is tagged.
import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';
import { graphCapture } from '@mate-guard/vitest';

const require = createRequire(import.meta.url);
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) test.skip(`CUDA examples skipped: ${noGpu}`, () => {});
else
  describe('CUDA kernels', () => {
    test('fill and add 1000 floats', () => {
      const a = cuda.alloc(1000);
      const b = cuda.allocAbi(1000);
      cuda.fill(a, 1000);
      cuda.fill(b, 1000);
      cuda.addInto(a, b, 1000);
      expect(cuda.sum(a, 1000)).toBe(2000);
      cuda.free(a);
      cuda.freeAbi(b);
    });

    test('captures a graph', graphCapture(), () => {
      expect(cuda.captureGraph(cuda.createStream())).toBe(null);
    });
  });
