'use strict';
// Correct native code: passes guarded and unguarded, with no report.
const assert = require('node:assert');
const addon = require('../addon');

describe('clean', function () {
  it('sums a buffer', function () {
    assert.strictEqual(addon.sum(Buffer.from([1, 2, 3, 4])), 10);
  });
  it('writes the last byte', function () {
    const buf = Buffer.alloc(4096);
    addon.writeAt(buf, buf.length - 1, 9);
    assert.strictEqual(addon.readAt(buf, buf.length - 1), 9);
  });
});
