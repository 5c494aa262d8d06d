// Planted bug: a fill loop with `<=` writes one byte past the end. The guard
// page right after the buffer (tail mode) faults on that byte; the worker dies
// and mate-jest names this test.
const addon = require('../addon');

describe('fillInclusive', () => {
  test('fills a 64-byte buffer', () => {
    const buf = Buffer.alloc(64);
    addon.fillInclusive(buf);
  });
});
