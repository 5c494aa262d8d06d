#!/usr/bin/env node
'use strict';
// node --test with mate-guard: see `mate-node-test --help`.
require('../dist/cli/mate-node-test.js').run();
