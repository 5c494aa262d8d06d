'use strict';
// Correct kernels on guarded memory: nothing to report.
const cuda = require('..');

const n = 1000;
const a = cuda.alloc(n);
const b = cuda.allocAbi(n);
cuda.fill(a, n);
cuda.fill(b, n);
cuda.addInto(a, b, n);
console.log(`sum ${cuda.sum(a, n)} guarded ${cuda.guarded()}`);
cuda.free(a);
cuda.freeAbi(b);
