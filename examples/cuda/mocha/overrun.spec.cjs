'use strict';
// Planted bug: a kernel with `<=` in its bound writes one float past the end
// of a 1000-float buffer. Under the device guard it hits the unmapped guard
// granule; the report names the kernel, its buffer and this test.
//   mate-mocha --guard-device cuda examples/cuda/mocha/overrun.spec.cjs
const noGpu = require('../gpu.js');
const cuda = require('..');

if (noGpu) {
  it.skip(`CUDA examples skipped: ${noGpu}`);
} else {
  it('fillInclusive writes one float past the end', function () {
    const a = cuda.alloc(1000);
    const b = cuda.alloc(1000);
    cuda.fill(b, 1000);
    cuda.fillInclusive(a, 1000);
    cuda.addInto(b, a, 1000);
    cuda.sync();
  });
}
