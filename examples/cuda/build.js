'use strict';
// Builds the CUDA example addon where the CUDA toolkit (nvcc) is found;
// elsewhere says so in one line and succeeds, so `npm install` stays green.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function findNvcc() {
  const dirs = (process.env.PATH || '').split(path.delimiter);
  for (const root of [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'])
    if (root) dirs.push(path.join(root, 'bin'));
  return dirs.map((d) => path.join(d, 'nvcc')).find((f) => fs.existsSync(f));
}

const nvcc = findNvcc();
if (!nvcc) {
  console.log('examples/cuda: no CUDA toolkit (nvcc) found, the CUDA example addon is not built');
  process.exit(0);
}
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
try {
  execFileSync(process.execPath, [cmakeJs, 'compile', '--log-level', 'warn', `--CDCMAKE_CUDA_COMPILER=${nvcc}`], {
    cwd: __dirname,
    stdio: 'inherit',
  });
} catch {
  // An example must not break the install: its tests skip when it is missing.
  console.log(`examples/cuda: the CUDA example addon did not build with ${nvcc} (see above); its tests will skip`);
}
