'use strict';
// Stream capture while the device guard is on is refused (the graph would
// replay allocations beyond the guard's reach):
//   mate guard-run --device cuda -- node examples/cuda/scripts/graph-capture.js
const cuda = require('..');

const refused = cuda.captureGraph(cuda.createStream());
console.log(refused === null ? 'captured' : `refused: ${refused}`);
