#!/usr/bin/env node
'use strict';
require('../dist/cli/mate.js')
  .main(process.argv.slice(2))
  .then((code) => { process.exitCode = code; });
