// Which configuration a rerun of canary damage uses: the one that makes the
// bad access fault at once, for host and device memory.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { planReruns } = await import(path.join(ROOT, 'packages/core-native/dist/run/rerun.js'));
const { defaultSettings } = await import(path.join(ROOT, 'packages/core-native/dist/settings/table.js'));
const gap = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events/gap-overflow.json'), 'utf8'));
const settings = defaultSettings({});
const withAllocation = (edit) => ({ ...gap, allocation: { ...gap.allocation, ...edit } });

test('host damage in the alignment gap reruns byte-exact', () => {
  const [g] = planReruns([gap], settings);
  assert.deepEqual([g.mode, g.alignment, g.launchBlocking, g.label], ['tail', 1, false, 'tail mode with alignment 1']);
});

test('device damage in the gap reruns with the largest power of two dividing the size, and launch blocking', () => {
  // 1001 floats: 4004 bytes, 12 bytes of gap at alignment 16; alignment 4 puts the end on the guard.
  const [g] = planReruns([withAllocation({ backend: 'cuda', size: 4004 })], settings);
  assert.deepEqual([g.mode, g.alignment, g.launchBlocking, g.label], ['tail', 4, true, 'tail mode with alignment 4']);
  // An odd size (bytes): byte-exact; 4008 bytes: 8.
  assert.equal(planReruns([withAllocation({ backend: 'cuda', size: 4001 })], settings)[0].alignment, 1);
  assert.equal(planReruns([withAllocation({ backend: 'cuda', size: 4008 })], settings)[0].alignment, 8);
});

test('damage before the start in tail mode reruns in head mode at the same alignment', () => {
  const before = {
    ...gap,
    damage: { before: { bytes: 1, nearest: 1, farthest: 1 }, after: { bytes: 0, nearest: 0, farthest: 0 } },
  };
  const [g] = planReruns([before], settings);
  assert.deepEqual([g.mode, g.alignment, g.label], ['head', 16, 'head mode']);
});

test("native heap damage in the gap reruns with that size byte-exact, every other native allocation at malloc's alignment", () => {
  const [g] = planReruns([withAllocation({ backend: 'native-heap', size: 13 })], settings);
  assert.deepEqual(
    [g.mode, g.alignment, g.nativeExactSize, g.label],
    ['tail', 16, 13, "tail mode with the native heap's 13-byte allocations placed byte-exact"],
  );
  // Two damaged sizes: one rerun each (a rerun places one size byte-exact).
  const groups = planReruns(
    [withAllocation({ backend: 'native-heap', size: 13 }), withAllocation({ backend: 'native-heap', size: 29 })],
    settings,
  );
  assert.deepEqual(
    groups.map((x) => x.nativeExactSize),
    [13, 29],
  );
});

test('damage past the end in head mode reruns in tail mode, with the gap its alignment would leave closed', () => {
  const past = (edit) => withAllocation({ mode: 'head', ...edit });
  // A multiple of the alignment ends on the guard in tail mode as it is.
  const [whole] = planReruns([past({ size: 64 })], settings);
  assert.deepEqual([whole.mode, whole.alignment, whole.label], ['tail', 16, 'tail mode']);
  // 10 bytes at alignment 16: byte-exact, as the report's hint says.
  const [odd] = planReruns([past({ size: 10 })], settings);
  assert.deepEqual([odd.mode, odd.alignment, odd.label], ['tail', 1, 'tail mode with alignment 1']);
  // The native heap keeps malloc's alignment: that size alone byte-exact.
  const [native] = planReruns([past({ backend: 'native-heap', size: 13 })], settings);
  assert.deepEqual([native.mode, native.alignment, native.nativeExactSize], ['tail', 16, 13]);
});
