// Planted bug: native code keeps a raw pointer to a buffer, the buffer is
// garbage-collected, native code writes through the stale pointer. The
// freed slot stays inaccessible, so the write faults. Needs --expose-gc
// (node --test hands it to every test file's process).
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const require = createRequire(import.meta.url);
const addon = require('../addon');
const collectGarbage = require('../addon/collect');

describe('use-after-free via a retained pointer', () => {
  it('touches a buffer after the GC freed it', async () => {
    let buf = Buffer.alloc(256);
    addon.retain(buf);
    buf = null;
    await collectGarbage(); // frees it: the stale pointer now points into a quarantined slot
    addon.touchRetained();
  });
});
