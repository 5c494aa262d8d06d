'use strict';
// Planted bug: a fill loop with `<=` writes one byte past the end.
// The guard page right after the buffer (tail mode) faults on that byte.
const addon = require('../addon');
const buf = Buffer.alloc(64);
addon.fillInclusive(buf);
console.log('not reached under mate-guard: the overflow went unnoticed');
