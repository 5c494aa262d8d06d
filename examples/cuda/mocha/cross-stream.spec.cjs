'use strict';
// Planted bug (the record_stream class): a buffer made on stream A is used by
// a kernel on stream B and freed on A without A waiting for B. The device
// guard reports cross-stream-free and holds the free back until B is done.
//   mate-mocha --guard-device cuda examples/cuda/mocha/cross-stream.spec.cjs
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) {
  it.skip(`CUDA examples skipped: ${noGpu}`);
} else {
  it('a buffer used on stream B is freed on stream A', function () {
    const A = cuda.createStream();
    const B = cuda.createStream();
    const x = cuda.alloc(1000, A);
    cuda.fill(x, 1000, A);
    cuda.waitFor(B, A);
    cuda.slowTouch(x, 2000, B);
    cuda.free(x, A);
    cuda.sync();
  });
}
