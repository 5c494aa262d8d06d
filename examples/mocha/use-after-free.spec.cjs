'use strict';
// Planted bug: native code keeps a raw pointer to a buffer, the buffer is
// garbage-collected, native code writes through the stale pointer. The
// freed slot stays inaccessible, so the write faults. Needs --expose-gc.
const addon = require('../addon');

describe('use-after-free via a retained pointer', function () {
  it('touches a buffer after the GC freed it', async function () {
    let buf = Buffer.alloc(256);
    addon.retain(buf);
    buf = null;
    // Frees run on an event-loop turn after the collection; a few rounds
    // make sure the buffer is gone whatever else the process is doing.
    for (let round = 0; round < 3; round++) {
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    addon.touchRetained();
  });
});
