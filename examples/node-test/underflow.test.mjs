// Planted bug: a reverse loop that runs down to index -1. In tail mode the
// canary before the buffer is found damaged after the test (the test
// fails); with MATE_NODE_TEST_GUARD_MODE=head (or mate-node-test
// --guard-mode head) the guard page there faults at once.
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const addon = createRequire(import.meta.url)('../addon');

describe('underflow by one', () => {
  it('reverse-fills a 64-byte buffer', () => {
    addon.reverseFill(Buffer.alloc(64));
  });
});
