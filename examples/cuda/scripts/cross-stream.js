'use strict';
// The record_stream bug: a buffer made on stream A is used by a kernel on
// stream B, then freed on A without A waiting for B. Any allocator may hand
// the memory out again while B still writes to it. Under the device guard
// the free is reported (cross-stream-free) and held back until B is done:
//   mate guard-run --device cuda -- node examples/cuda/scripts/cross-stream.js
const cuda = require('..');

const n = 1000;
const A = cuda.createStream();
const B = cuda.createStream();
const x = cuda.alloc(n, A);
cuda.fill(x, n, A);
cuda.waitFor(B, A);
cuda.slowTouch(x, 2000, B);
cuda.free(x, A);
cuda.sync();
console.log('done');
