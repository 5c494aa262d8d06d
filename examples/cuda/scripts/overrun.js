'use strict';
// A kernel that writes one float past the end of its 1000-float buffer,
// launched among other kernels. Plain cudaMalloc hides it (the write lands
// in the allocation's rounding); under the device guard (the addon's
// cudaMalloc redirected, no code change) it faults in tail mode and the
// report names the kernel and the buffer; in head mode the canary catches it
// at free:
//   mate guard-run --device cuda -- node examples/cuda/scripts/overrun.js
//   mate guard-run --device cuda --launch-blocking -- node examples/cuda/scripts/overrun.js
//   mate guard-run --device cuda --mode head -- node examples/cuda/scripts/overrun.js
const cuda = require('..');

const n = 1000;
const a = cuda.alloc(n);
const b = cuda.alloc(n);
cuda.fill(b, n);
cuda.fillInclusive(a, n);
cuda.addInto(b, a, n);
cuda.sync();
console.log(`sum ${cuda.sum(b, n)}`);
cuda.free(a);
cuda.free(b);
