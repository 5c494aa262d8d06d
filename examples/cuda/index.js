'use strict';
// The CUDA example addon, or null where it was not built (no CUDA toolkit).
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, 'build', 'Release', 'cuda_example.node');
module.exports = fs.existsSync(file) ? require(file) : null;
