'use strict';
// The record_stream rule, scenario by scenario: a buffer made on stream A,
// used by a kernel on another stream, freed on A. Prints each scenario's
// buffer address; the device guard reports the frees that were not ordered
// after the use (cross-stream-free):
//   mate guard-run --device cuda -- node examples/cuda/scripts/stream-matrix.js [scenario...]
const cuda = require('..');

const n = 1000;
const A = cuda.createStream();
const B = cuda.createStream();
const C = cuda.createStream();

const scenarios = {
  'no-sync': (x) => cuda.fill(x, n, B),
  'user-waits-on-creation': (x) => {
    cuda.waitFor(B, A);
    cuda.fill(x, n, B);
  },
  'creation-waits-on-user': (x) => {
    cuda.fill(x, n, B);
    cuda.waitFor(A, B);
  },
  'both-directions': (x) => {
    cuda.waitFor(B, A);
    cuda.fill(x, n, B);
    cuda.waitFor(A, B);
  },
  'device-synchronize': (x) => {
    cuda.fill(x, n, B);
    cuda.sync();
  },
  'record-stream': (x) => {
    cuda.fill(x, n, B);
    cuda.recordStream(x, B);
  },
  'same-stream': (x) => cuda.fill(x, n, A),
  'two-user-streams': (x) => {
    cuda.fill(x, n, B);
    cuda.fill(x, n, C);
  },
};

const chosen = process.argv.slice(2);
for (const [name, use] of Object.entries(scenarios)) {
  if (chosen.length && !chosen.includes(name)) continue;
  const x = cuda.alloc(n, A);
  cuda.fill(x, n, A);
  use(x);
  console.log(`${name}: 0x${x.toString(16)}`);
  cuda.free(x, A);
}
cuda.sync();
