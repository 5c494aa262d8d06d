#!/usr/bin/env node
'use strict';
// mocha with mate-guard: see `mate-mocha --help`.
require('../dist/cli/mate-mocha.js').run();
