#!/usr/bin/env node
'use strict';
// Copies the built binary to prebuilds/<platform>-<arch>/, where the loader
// and the install script look first: run before packing for publication.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const built = path.join(root, 'build', 'Release', 'mate_guard.node');
const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
if (!fs.existsSync(built)) {
  console.error(`prebuild: ${built} does not exist; run npm run build:native first`);
  process.exit(1);
}
fs.mkdirSync(dir, { recursive: true });
fs.copyFileSync(built, path.join(dir, 'mate_guard.node'));
console.log(`prebuild: ${path.relative(root, path.join(dir, 'mate_guard.node'))}`);
