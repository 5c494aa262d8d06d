// Planted bug: a fill loop with `<=` writes one byte past the end. The guard
// page right after the buffer faults; the worker dies and mate-guard names
// this test in vitest's output.
import { createRequire } from 'node:module';
import { describe, test } from 'vitest';

const addon = createRequire(import.meta.url)('../addon');

describe('overflow', () => {
  test('fillInclusive writes one byte past the end', () => {
    const buf = Buffer.alloc(64);
    addon.fillInclusive(buf);
  });
});
