// Correct native code: passes guarded and unguarded, with no report.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const addon = createRequire(import.meta.url)('../addon');

describe('clean', () => {
  it('sums a buffer', () => {
    assert.equal(addon.sum(Buffer.from([1, 2, 3, 4])), 10);
  });
  it('writes the last byte', () => {
    const buf = Buffer.alloc(4096);
    addon.writeAt(buf, buf.length - 1, 9);
    assert.equal(addon.readAt(buf, buf.length - 1), 9);
  });
});
