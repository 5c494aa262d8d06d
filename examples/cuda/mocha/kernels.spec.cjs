'use strict';
// Correct kernels on device memory from the addon's own cudaMalloc, which
// the device guard redirects (no code change); graph capture is refused
// while guarding is on, so that test is tagged.
//   mate-mocha --guard-device cuda examples/cuda/mocha/kernels.spec.cjs
const assert = require('node:assert');
const { graphCapture } = require('@mate-guard/mocha');
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) {
  it.skip(`CUDA examples skipped: ${noGpu}`);
} else {
  describe('CUDA kernels', function () {
    it('fill and add 1000 floats', function () {
      const a = cuda.alloc(1000);
      const b = cuda.allocAbi(1000);
      cuda.fill(a, 1000);
      cuda.fill(b, 1000);
      cuda.addInto(a, b, 1000);
      assert.strictEqual(cuda.sum(a, 1000), 2000);
      cuda.free(a);
      cuda.freeAbi(b);
    });

    graphCapture(
      it('captures a graph', function () {
        assert.strictEqual(cuda.captureGraph(cuda.createStream()), null);
      }),
    );
  });
}
