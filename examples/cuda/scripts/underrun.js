'use strict';
// A stencil kernel that touches one float before the start of its buffer.
// Under the device guard it faults in head mode, and the canary catches it
// at free in tail mode:
//   mate guard-run --device cuda --mode head -- node examples/cuda/scripts/underrun.js
//   mate guard-run --device cuda -- node examples/cuda/scripts/underrun.js
const cuda = require('..');

const n = 1000;
const a = cuda.alloc(n);
cuda.fill(a, n);
cuda.smoothFromMinusOne(a, n);
cuda.sync();
console.log(`sum ${cuda.sum(a, n)}`);
cuda.free(a);
