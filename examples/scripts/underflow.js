'use strict';
// Planted bug: a reverse loop that runs down to index -1.
// In head mode the guard page sits right before the buffer and faults;
// in tail mode the canary before the start is found damaged instead.
const addon = require('../addon');
const buf = Buffer.alloc(64);
addon.reverseFill(buf);
console.log('underflow done: in tail mode the canary check at exit reports it');
