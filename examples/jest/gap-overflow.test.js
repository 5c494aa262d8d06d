// Planted bug: writing 2 bytes past the end of a 13-byte buffer. With the
// default 16-byte alignment the byte lands in the gap before the guard page:
// no fault, but the canary check after the test fails it.
const addon = require('../addon');

describe('writeAt', () => {
  test('writes the last byte of a 13-byte record', () => {
    const buf = Buffer.from(new ArrayBuffer(13)); // an ArrayBuffer keeps the gap: Buffer.alloc(13) faults at once
    addon.writeAt(buf, buf.length + 1, 0x7a);
  });
});
