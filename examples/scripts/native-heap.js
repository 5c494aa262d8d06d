'use strict';
// Planted bugs in memory the addon allocates itself, caught when its native
// heap is guarded:
//   mate guard-run --native '*buggy_addon.node' -- node examples/scripts/native-heap.js <bug>
// <bug>: mallocOverflow, callocOverflow, reallocOverflow, newArrayOverflow,
// vectorOverflow, mallocUnderflow (faults in head mode), useAfterFree,
// doubleFree, invalidFree, poolThreadOverflow.
const addon = require('../addon');
const bug = process.argv[2];
if (bug === 'poolThreadOverflow') {
  addon.nativeHeap.poolThread(() => console.log('not reached under mate-guard: the overflow went unnoticed'), true);
} else if (typeof addon.nativeHeap[bug] === 'function') {
  addon.nativeHeap[bug]();
  console.log(`${bug}: returned`);
} else {
  console.error(`usage: native-heap.js <${Object.keys(addon.nativeHeap).join('|')}|poolThreadOverflow>`);
  process.exit(2);
}
