// The native heap keeps malloc's 16-byte alignment promise whatever
// `alignment` says (code relies on it: SSE movdqa loads); a gap overflow
// it leaves is canary damage, and the rerun places only the damaged
// allocation's size byte-exact, so a library beside it is not broken; a
// rerun that dies of something else says so, with that death's report.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, test } from 'node:test';

import { buildAlignAddons, hookAddonsMissing } from './helpers/hook-addons.mjs';
import { guardRun, reportLines, rerunReportOf, ROOT } from './helpers/run.mjs';

const skip = hookAddonsMissing() || (process.arch !== 'x64' && 'the SSE fixture is x86-64') || false;
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'native-heap', 'align.js');
const NATIVE = ['--native', '*sse_user.node', '--native', '*gap_addon.node'];
let dir = '';
before(() => {
  if (!skip) dir = buildAlignAddons();
});

const align = (flags, sizes, then) =>
  guardRun([...NATIVE, ...flags], [SCRIPT, dir, sizes, ...(then === true ? ['gap'] : then ? [then] : [])]);
const LABEL = "tail mode with the native heap's 13-byte allocations placed byte-exact";

test('--alignment 1 leaves native allocations 16-byte aligned: aligned SSE loads of every size work', {
  skip,
}, async () => {
  const r = await align(['--alignment', '1'], '1,2,3,8,13,24,40,100');
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /^sse loads: 56$/m);
  assert.doesNotMatch(r.output, /==mate-guard==/);
});

test('a one-byte overflow into the gap malloc alignment leaves is canary damage, its hint the exact-size setting', {
  skip,
}, async () => {
  const r = await align(['--alignment', '1', '--no-rerun'], '24', true);
  assert.equal(r.code, 1, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: canary-corruption: 1 byte past the end of allocation #\d+ \(13 bytes, tail mode\) damaged$/,
  );
  assert.ok(
    lines.some((l) => /13 bytes at \[0x[0-9a-f]+, 0x[0-9a-f]+\), tail mode, alignment 16, backend native-heap/.test(l)),
    r.output,
  );
  assert.ok(
    lines.includes('==mate-guard== slot: | canary 4080 B | data 13 B    | gap (canary) 3 B | GUARD 4096 B |'),
    r.output,
  );
  assert.ok(
    lines.includes(
      "==mate-guard== hint: the write landed in the gap malloc's 16-byte alignment leaves: rerun with the native heap's 13-byte allocations placed byte-exact to fault at the first bad access (--guard-native-exact-size=13, mate guard-run --native-exact-size 13, or installGuardAllocator({ nativeExactSize: 13 }))",
    ),
    r.output,
  );
});

test('--native-exact-size places that size byte-exact: the same write faults at once', { skip }, async () => {
  const r = await align(['--native-exact-size', '13'], '24', true);
  assert.equal(r.code, 139, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(13 bytes, tail mode\)$/,
  );
  assert.ok(
    lines.some((l) => /13 bytes at .*, tail mode, alignment 1, backend native-heap/.test(l)),
    r.output,
  );
  assert.match(lines.join('\n'), /access:\n==mate-guard== {3}#0 GapOverflow \S*align\.c:\d+ \(gap_addon\.node\+0x/);
});

test('the rerun after gap damage places only that size byte-exact: the library beside it keeps working, the write faults', {
  skip,
}, async () => {
  const r = await align([], '16,24,40', true);
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    /\[mate-guard\] rerunning the command in tail mode with the native heap's 13-byte allocations placed byte-exact to find the access behind a canary report/,
  );
  const rerun = rerunReportOf(r.output, LABEL);
  assert.match(
    rerun,
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(13 bytes, tail mode\)$/m,
  );
  assert.match(rerun, /^==mate-guard== {3}#0 GapOverflow \S*align\.c:\d+ \(gap_addon\.node\+0x/m);
});

test('a rerun that dies of something else first says so and shows that death, not "did not fault"', {
  skip,
}, async () => {
  // The library's own 13-byte blocks, placed byte-exact in the rerun, break its aligned SSE load before the planted write.
  const r = await align([], '13,24', true);
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    new RegExp(
      `\\[mate-guard\\] rerun in ${LABEL}: the canary-corruption of allocation #\\d+ \\(13 bytes, tail mode\\) did not fault: the rerun died of something else first, before the bad access, so it proves nothing about it; the death:\\n==mate-guard== ERROR: deadly-signal: SIGSEGV`,
    ),
  );
  assert.doesNotMatch(r.output, /may depend on timing/);
  const death = rerunReportOf(r.output, LABEL);
  assert.match(
    death,
    /^==mate-guard== ERROR: deadly-signal: SIGSEGV \(a general-protection fault: movdqa needs 16-byte aligned memory and was given 0x[0-9a-f]+, 3 bytes past a 16-byte boundary\): the process dies$/m,
  );
  assert.match(death, /^==mate-guard== {3}#0 SseLoad \S*align\.c:\d+ \(sse_user\.node\+0x/m);
  assert.match(death, /^==mate-guard== allocation #\d+: 13 bytes at .*, tail mode, alignment 1, backend native-heap/m);
  assert.match(
    death,
    /^==mate-guard== hint: movdqa was given allocation #\d+, which mate-guard placed 1-byte aligned: the native heap placed its 13-byte allocations byte-exact .*; this death is the placement's, not a bug of the program$/m,
  );
});

test("an aligned SSE load of the program's own misaligned memory is described as what it is, and asks for no setting", {
  skip,
}, async () => {
  const r = await align([], '24', 'static');
  assert.equal(r.code, 139, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: deadly-signal: SIGSEGV \(a general-protection fault: movdqa needs 16-byte aligned memory and was given 0x[0-9a-f]+, 8 bytes past a 16-byte boundary\): the process dies$/,
  );
  assert.match(r.output, /^==mate-guard== {3}#0 SseLoadStatic \S*align\.c:\d+ \(sse_user\.node\+0x/m);
  const hint = lines.find((l) => l.startsWith('==mate-guard== hint: '));
  assert.equal(
    hint,
    '==mate-guard== hint: the code at the top of the stack assumed 16-byte alignment of memory mate-guard did not allocate: a pointer offset from an aligned start, or memory from an allocator that promises less; the stack shows where',
  );
  assert.doesNotMatch(r.output, /--guard-native|outside guarded memory/);
});
