// Planted bug: native code keeps a raw pointer to a buffer, JS drops the
// buffer, the garbage collector frees it, native code writes through the
// stale pointer. The freed slot stays inaccessible, so the write faults.
import { createRequire } from 'node:module';
import { describe, test } from 'vitest';

const require = createRequire(import.meta.url);
const addon = require('../addon');
const collectGarbage = require('../addon/collect');

describe('use-after-free', () => {
  test('touchRetained writes through a pointer to a collected buffer', async () => {
    let buf = Buffer.alloc(256);
    addon.retain(buf);
    buf = null;
    await collectGarbage(); // frees it: the stale pointer now points into a quarantined slot
    addon.touchRetained();
  });
});
