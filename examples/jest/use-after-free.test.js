// Planted bug: native code keeps a raw pointer, JS drops the buffer, the
// garbage collector frees it, native code writes through the stale pointer.
// The freed slot is quarantined and inaccessible, so the write faults.
const v8 = require('node:v8');
const vm = require('node:vm');
const addon = require('../addon');
const collectGarbage = require('../addon/collect');

v8.setFlagsFromString('--expose-gc'); // Jest workers don't get --expose-gc
const gc = vm.runInNewContext('gc');

describe('retain', () => {
  test('touches a buffer after it was collected', async () => {
    let buf = Buffer.alloc(256);
    addon.retain(buf);
    buf = null;
    await collectGarbage(gc); // frees it: the stale pointer now points into a quarantined slot
    addon.touchRetained();
  });
});
