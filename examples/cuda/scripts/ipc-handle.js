'use strict';
// A legacy CUDA IPC handle (cudaIpcGetMemHandle) of a buffer: plain, the
// handle; under the device guard, refused with the reason (a guarded range
// is a virtual-memory mapping such a handle cannot name):
//   mate guard-run --device cuda -- node examples/cuda/scripts/ipc-handle.js
const cuda = require('..');

const buf = cuda.alloc(1000);
const refused = cuda.ipcHandle(buf);
console.log(refused === null ? 'handle' : `refused: ${refused}`);
cuda.free(buf);
