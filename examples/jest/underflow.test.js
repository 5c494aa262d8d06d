// Planted bug: a reverse loop that runs down to index -1. Tail mode finds the
// canary before the buffer damaged and fails this test; `--guard-mode head`
// faults at the bad write itself.
const addon = require('../addon');

describe('reverseFill', () => {
  test('fills a 64-byte buffer backwards', () => {
    const buf = Buffer.alloc(64);
    addon.reverseFill(buf);
  });
});
