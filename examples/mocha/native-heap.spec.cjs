'use strict';
// Planted bugs in memory the addon allocates itself (malloc, new): caught
// with its native heap guarded, `--guard-native '*buggy_addon.node'`.
const addon = require('../addon');

describe('native heap', function () {
  it('a double free is reported for this test, and ignored', function () {
    addon.nativeHeap.doubleFree();
  });
  it('one byte past a malloc block faults at the write', function () {
    addon.nativeHeap.mallocOverflow();
  });
});
