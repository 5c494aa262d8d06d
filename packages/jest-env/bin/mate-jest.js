#!/usr/bin/env node
'use strict';
// Drop-in for `jest` that also takes mate-guard's flags (see --help).
require('../dist/cli/mate-jest.js').main().catch((err) => {
  process.stderr.write(`mate-jest: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
