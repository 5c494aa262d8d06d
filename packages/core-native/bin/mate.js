#!/usr/bin/env node
'use strict';
// A bad setting or argument: runCli's one line, status 2.
require('../dist/errors.js').runCli('mate', require('../dist/cli/mate.js').main);
