// Planted bugs in memory the addon allocates itself (malloc, new): caught
// with its native heap guarded, `--guard-native '*buggy_addon.node'`.
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const addon = createRequire(import.meta.url)('../addon');

describe('native heap', () => {
  it('a double free is reported for this test, and ignored', () => {
    addon.nativeHeap.doubleFree();
  });
  it('one byte past a malloc block faults at the write', () => {
    addon.nativeHeap.mallocOverflow();
  });
});
