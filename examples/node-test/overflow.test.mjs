// Planted bug: a fill loop with `<=` writes one byte past the end. Under
// mate-guard (tail mode) the guard page right after the buffer faults on
// that byte; this file's process dies, node --test goes on with the other
// files, and the test is failed with the report.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const addon = createRequire(import.meta.url)('../addon');

describe('overflow by one', () => {
  it('fills a 64-byte buffer', () => {
    const buf = Buffer.alloc(64);
    addon.fillInclusive(buf);
    assert.equal(buf[63], 0xab);
  });
});
