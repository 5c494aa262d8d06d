'use strict';
// Makes sure the garbage collector has freed what JS dropped: a buffer is
// freed in the collection that finds it unreachable or on the event-loop
// turn after (Node-API finalizers), and a few rounds leave no doubt whatever
// else the process is doing. Then a moment for mate-guard's background
// closer, which gathers a collection's frees (100 us) before it makes their
// slots inaccessible: on a loaded machine it may run milliseconds later.
// `gc` is global.gc under --expose-gc.
module.exports = async function collectGarbage(gc = globalThis.gc, rounds = 3) {
  if (typeof gc !== 'function') throw new Error('collectGarbage needs gc(): run node with --expose-gc');
  for (let i = 0; i < rounds; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
};
