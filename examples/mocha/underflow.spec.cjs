'use strict';
// Planted bug: a reverse loop that runs down to index -1. In tail mode the
// canary before the buffer is found damaged after the test (the test
// fails); with --guard-mode=head the guard page there faults at once.
const addon = require('../addon');

describe('underflow by one', function () {
  it('reverse-fills a 64-byte buffer', function () {
    addon.reverseFill(Buffer.alloc(64));
  });
});
