// Planted bug: a write 2 bytes past the end of a 13-byte buffer lands in the
// alignment gap before the guard page: no fault, but the canary there is
// checked after the test, and the test fails with the report.
import { createRequire } from 'node:module';
import { describe, test } from 'vitest';

const addon = createRequire(import.meta.url)('../addon');

describe('alignment gap', () => {
  test('writeAt(buf, length + 1) damages the gap canary', () => {
    const buf = Buffer.from(new ArrayBuffer(13)); // an ArrayBuffer keeps the gap: Buffer.alloc(13) faults at once
    addon.writeAt(buf, buf.length + 1, 0x7a);
  });
});
