// Planted bug: native code keeps a raw pointer to a buffer, JS drops the
// buffer, the garbage collector frees it, native code writes through the
// stale pointer. The freed slot stays inaccessible, so the write faults.
import { createRequire } from 'node:module';
import { describe, test } from 'vitest';

const addon = createRequire(import.meta.url)('../addon');

describe('use-after-free', () => {
  test('touchRetained writes through a pointer to a collected buffer', async () => {
    let buf = Buffer.alloc(256);
    addon.retain(buf);
    buf = null;
    for (let round = 0; round < 2; round++) {
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    addon.touchRetained();
  });
});
