'use strict';
// The planted-bug addon, built by `npm install` (cmake-js). On another
// architecture (the arm64 test tier under emulation), its cross build in
// build/linux-<arch>/ (test/arm64.test.mjs builds it).
const fs = require('node:fs');
const path = require('node:path');

const cross = path.join(__dirname, 'build', `linux-${process.arch}`, 'Release', 'buggy_addon.node');
module.exports =
  process.arch !== 'x64' && fs.existsSync(cross) ? require(cross) : require('./build/Release/buggy_addon.node');
