#!/usr/bin/env node
'use strict';
// Drop-in for `jest` that also takes mate-guard's flags (see --help).
const { runCli } = require('@mate-guard/core/internal');
const { main } = require('../dist/cli/mate-jest.js');

// main sets the exit code itself; runCli turns a bad setting found on the
// way (or no usable native binary) into its one line and status 2.
runCli('mate-jest', async (argv) => {
  await main(argv);
  return process.exitCode ?? 0;
});
