'use strict';
// Planted bug: native code keeps a raw pointer to a buffer, JS drops the
// buffer, the garbage collector frees it, and native code writes through
// the stale pointer. The freed slot is quarantined and inaccessible.
// Run with --expose-gc.
const addon = require('../addon');
let buf = Buffer.alloc(256);
addon.retain(buf);
buf = null;
globalThis.gc();
setImmediate(() => {
  addon.touchRetained();
  console.log('not reached under mate-guard: the stale write went unnoticed');
});
