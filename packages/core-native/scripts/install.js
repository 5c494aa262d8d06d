#!/usr/bin/env node
'use strict';
// npm install of @mate-guard/core: use the prebuilt binary shipped for this
// platform when it loads (no build tools needed), else build from source
// with cmake-js in Node-API mode (no header download).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const prebuilt = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'mate_guard.node');

function loads(file) {
  try {
    require(file);
    return true;
  } catch (err) {
    console.warn(`@mate-guard/core: prebuilt ${file} does not load here (${err.message}); building from source`);
    return false;
  }
}

if (fs.existsSync(prebuilt) && loads(prebuilt)) process.exit(0);
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
const r = spawnSync(process.execPath, [cmakeJs, 'compile', '--log-level', 'warn'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  console.error('@mate-guard/core: building the native allocator failed: it needs Linux, cmake >= 3.15 and a C++17 compiler.');
  process.exit(r.status ?? 1);
}
