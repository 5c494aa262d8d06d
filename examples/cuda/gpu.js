'use strict';
// Why the CUDA examples can't run here ('' when they can): no CUDA toolkit
// at install (the addon was not built) or no GPU.
const cuda = require('.');

module.exports = !cuda
  ? 'the CUDA example addon is not built here (no CUDA toolkit at install)'
  : cuda.deviceCount() === 0
    ? 'no CUDA GPU on this machine'
    : '';
