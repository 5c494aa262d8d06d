// Planted bug: a reverse loop that runs down to index -1. Tail mode (the
// default) finds the canary before the start damaged and fails this test;
// --guard-mode head faults at the bad write itself.
import { createRequire } from 'node:module';
import { describe, test } from 'vitest';

const addon = createRequire(import.meta.url)('../addon');

describe('underflow', () => {
  test('reverseFill writes one byte before the start', () => {
    const buf = Buffer.alloc(64);
    addon.reverseFill(buf);
  });
});
