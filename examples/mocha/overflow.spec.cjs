'use strict';
// Planted bug: a fill loop with `<=` writes one byte past the end. Under
// mate-guard (tail mode) the guard page right after the buffer faults on
// that byte; mocha dies, the report names this test.
const assert = require('node:assert');
const addon = require('../addon');

describe('overflow by one', function () {
  it('fills a 64-byte buffer', function () {
    const buf = Buffer.alloc(64);
    addon.fillInclusive(buf);
    assert.strictEqual(buf[63], 0xab);
  });
});
