// What ran unguarded is said, each reason with its own count; a chosen
// module whose allocations never come through its imports (its own
// allocator, as Rust addons carry) gets a line naming it.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { buildNoHeapAddon, buildOwnAllocatorAddon, hookAddonsMissing } from './helpers/hook-addons.mjs';
import { guardRun, ROOT } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'native-heap');
const skip = hookAddonsMissing() || false;

test('a chosen module that made no allocation call mate-guard can see is named at the end, saying which case it is; one that did is not', {
  skip,
}, async () => {
  const own = buildOwnAllocatorAddon();
  const none = buildNoHeapAddon();
  const script = `const o = require(${JSON.stringify(own)}); const n = require(${JSON.stringify(none)}); const a = require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))});
    console.log(o.hash('hello'), n.add(1, 2), a.nativeHeap.everyForm());`;
  const r = await guardRun(
    ['--native', '*own_alloc.node', '--native', '*no_heap.node', '--native', '*buggy_addon.node'],
    ['-e', script],
  );
  assert.equal(r.code, 0, r.output);
  const lines = r.stderr.split('\n').filter((l) => l.includes('made no allocation calls'));
  // Only the module that maps memory itself and imports no allocation function is said to carry its own allocator.
  assert.deepEqual(lines, [
    `[mate-guard] native heap: ${none} matched but made no allocation calls mate-guard can see: it imports no allocation function and maps no memory: it has no heap of its own to guard`,
    `[mate-guard] native heap: ${own} matched but made no allocation calls mate-guard can see: it imports no allocation function yet maps memory itself (mmap): it carries its own allocator (statically linked, as Rust and Go addons often do), whose memory is not guarded`,
  ]);
  assert.match(r.stderr, /\[mate-guard\] native heap: \d+ of \d+ allocations of the chosen modules guarded/);
});

test('the closing warning gives each reason allocations ran unguarded its own count', async () => {
  const env = { MATE_GUARD_FORCE_MPROTECT: '1', MATE_GUARD_MAX_LIVE_MPROTECT: '10' };
  const r = await guardRun([], [path.join(FIX, 'unguarded-mix.js')], { env });
  assert.equal(r.code, 0, r.output);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('[mate-guard] warning:'));
  assert.deepEqual(warnings, [
    "[mate-guard] warning: 13 allocations ran unguarded: 10 because the live-allocation cap for mprotect guard pages (vm.max_map_count) was reached; 3 shared buffers, which can't be guarded",
  ]);
});

test('the native coverage line says why calls went to libc, each with its count', async () => {
  const r = await guardRun(
    ['--native', '*buggy_addon.node', '--native-sample-rate', '4'],
    [path.join(FIX, 'count.js')],
  );
  assert.equal(r.code, 0, r.output);
  const m =
    /^\[mate-guard\] native heap: (\d+) of (\d+) allocations of the chosen modules guarded \([\d.]+%\), (\d+) went to libc \((\d+) sampled out((?:, \d+ [^,]+)*)\)$/m.exec(
      r.stderr,
    );
  assert.ok(m, r.stderr);
  assert.equal(Number(m[1]) + Number(m[3]), Number(m[2]));
  // Each reason counted: they add up (a realloc of a block libc made is one of them).
  const others = [...m[5].matchAll(/, (\d+) /g)].map((x) => Number(x[1]));
  assert.equal(Number(m[4]) + others.reduce((a, b) => a + b, 0), Number(m[3]), m[0]);
  assert.ok(Number(m[4]) > Number(m[3]) / 2, m[0]);
});
