'use strict';
// Planted bug: native code keeps a raw pointer to a buffer, JS drops the
// buffer, the garbage collector frees it, and native code writes through
// the stale pointer. The freed slot is quarantined and inaccessible.
// Run with --expose-gc.
const addon = require('../addon');
function handToNative() {
  const buf = Buffer.alloc(256);
  addon.retain(buf); // keeps a raw pointer, no reference
} // the only JS reference to the buffer ends here
handToNative();
// Freed by the collector (and its slot closed): see ../addon/collect.js.
require('../addon/collect')().then(() => {
  addon.touchRetained();
  console.log('not reached under mate-guard: the stale write went unnoticed');
});
