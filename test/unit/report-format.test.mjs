// The one report formatter, from events recorded by real runs
// (test/fixtures/events): what a user reads, line by line.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { formatReport } = await import(path.join(ROOT, 'packages/core-native/dist/report/format.js'));
const event = (name) => JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events', `${name}.json`), 'utf8'));
const lines = (name, edit = (e) => e) =>
  formatReport(edit(event(name)))
    .split('\n')
    .slice(0, -1);

test('every line of a report starts with ==mate-guard==', () => {
  for (const name of ['overflow', 'underflow', 'gap-overflow', 'use-after-free']) {
    const text = formatReport(event(name));
    assert.ok(text.endsWith('\n'));
    for (const line of text.split('\n').slice(0, -1)) assert.ok(line.startsWith('==mate-guard== '), `${name}: ${line}`);
  }
});

test("a fault: headline, allocation, slot picture with the access marked, the user's stack frames (runner and node frames counted), hint", () => {
  assert.deepEqual(lines('overflow'), [
    '==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x7fc2dc001000: 1 byte past the end of allocation #1 (64 bytes, tail mode)',
    '==mate-guard== allocation #1: 64 bytes at [0x7fc2dc000fc0, 0x7fc2dc001000), tail mode, alignment 16, backend host (madvise-guard)',
    '==mate-guard== slot: | canary 4032 B | data 64 B    | GUARD 4096 B |',
    '==mate-guard==                                       ^ WRITE',
    '==mate-guard== allocated at:',
    '==mate-guard==   at Object.<anonymous> (examples/scripts/overflow.js:5:20)',
    '==mate-guard==   … 6 runner frames',
    '==mate-guard== hint: native code accessed past the end: check the length it was given (buffer.length / byteLength) and its loop bounds',
    '==mate-guard== suppression: heap-buffer-overflow allocation=*overflow.js:5:*',
  ]);
});

test('canary damage before the start: extent, marker on the canary, the hint to rerun in head mode', () => {
  const l = lines('underflow');
  assert.equal(
    l[0],
    '==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #1 (64 bytes, tail mode) damaged',
  );
  assert.equal(l[2], '==mate-guard== damaged: 1 byte, 1 byte before the start');
  assert.equal(l[3], '==mate-guard== slot: | canary 4032 B | data 64 B    | GUARD 4096 B |');
  assert.equal(l[4], '==mate-guard==                     ^ damaged canary');
  assert.equal(
    l.at(-2),
    '==mate-guard== hint: canary damaged before the start in tail mode: rerun with --guard-mode head to fault at the first bad access',
  );
  assert.equal(l.at(-1), '==mate-guard== suppression: canary-corruption allocation=*underflow.js:6:*');
});

test('a write into the alignment gap: the gap is drawn and the hint names alignment 1', () => {
  const l = lines('gap-overflow');
  assert.equal(
    l[0],
    '==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #1 (13 bytes, tail mode) damaged',
  );
  assert.equal(l[2], '==mate-guard== damaged: 1 byte, 2 bytes past the end');
  assert.equal(l[3], '==mate-guard== slot: | canary 4080 B | data 13 B    | gap (canary) 3 B | GUARD 4096 B |');
  assert.match(
    l.at(-2),
    /^==mate-guard== hint: the write landed in the alignment gap \(alignment 16\): rerun byte-exact/,
  );
});

test('use-after-free: "freed", who freed it, the GC hint; a test name when one ran', () => {
  const l = lines('use-after-free', (e) => ({
    ...e,
    test: 'a > b',
    allocation: { ...e.allocation, allocTest: 'a > b', freeTest: 'a > c' },
  }));
  assert.equal(
    l[0],
    '==mate-guard== ERROR: heap-use-after-free on WRITE at 0x7f9720000f00: offset 0 inside freed allocation #1 (256 bytes, tail mode)',
  );
  assert.equal(l[1], '==mate-guard== test: a > b');
  assert.ok(l.includes('==mate-guard== allocated during test: a > b'));
  assert.ok(l.includes('==mate-guard== freed during test: a > c'));
  assert.ok(l.includes('==mate-guard== freed by the garbage collector: no JS reference to the buffer was left'));
  assert.match(l.at(-2), /keep a reference to it \(napi_ref \/ Napi::Reference\)/);
  assert.equal(
    l.at(-1),
    '==mate-guard== suppression: heap-use-after-free allocation=*use-after-free.js:8:* test="a > b"',
  );
});

test('no stack captured says why', () => {
  const l = lines('overflow', (e) => ({ ...e, allocation: { ...e.allocation, allocStack: null } }));
  assert.ok(l.includes('==mate-guard== allocated at (no stack captured: captureStacks is off)'));
});

test("a fault's native access stack: sanitizer-style frames down to the runtime, the rest counted", () => {
  const frames = [
    {
      pc: '0x7f0000062a8',
      module: '/x/buggy_addon.node',
      offset: 0x62a8,
      returnAddress: false,
      function: '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)',
      file: path.join(process.cwd(), 'src/buggy.cc'),
      line: 36,
      source: 'llvm-symbolizer',
    },
    { pc: '0x7f00000d7b9', module: '/x/buggy_addon.node', offset: 0xd7b9, returnAddress: true, source: 'none' },
    {
      pc: '0xc45d95',
      module: '/usr/bin/node',
      offset: 0xc45d95,
      returnAddress: true,
      function: 'v8impl::FunctionCallbackWrapper::Invoke',
      source: 'elf-symbols',
    },
    { pc: '0xf50bdf', module: '/usr/bin/node', offset: 0xf50bdf, returnAddress: true, source: 'none' },
    { pc: '0xf5144d', module: '/usr/bin/node', offset: 0xf5144d, returnAddress: true, source: 'none' },
  ];
  const l = lines('overflow', (e) => ({ ...e, accessStack: { unwind: 'unwind-tables', frames } }));
  assert.deepEqual(l.slice(0, 6), [
    '==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x7fc2dc001000: 1 byte past the end of allocation #1 (64 bytes, tail mode)',
    '==mate-guard== access:',
    '==mate-guard==   #0 FillInclusive src/buggy.cc:36 (buggy_addon.node+0x62a8)',
    '==mate-guard==   #1 (buggy_addon.node+0xd7b9)',
    '==mate-guard==   #2 v8impl::FunctionCallbackWrapper::Invoke (node+0xc45d95)',
    '==mate-guard==   … 2 more frames in the runtime',
  ]);
});

test("a death that is no guard fault (recorded: glibc aborting on a free that bypassed the router): the signal, glibc's message, what mate-guard knows, the allocation, the hint", () => {
  const l = lines('death-free-bypassing-router');
  assert.equal(
    l[0],
    "==mate-guard== ERROR: deadly-signal: SIGABRT (abort(): a failed assert, a library's fatal check, or abort() called directly): the process dies",
  );
  assert.equal(l[1], '==mate-guard== test: spec/deaths.test.js > deaths > freeBypassingRouter');
  assert.equal(l[2], '==mate-guard== glibc: munmap_chunk(): invalid pointer');
  assert.match(
    l[3],
    /^==mate-guard== mate-guard: free\(\) of a pointer mate-guard allocated \(0x[0-9a-f]+, allocation #\d+\), called from a module or by a path that is not redirected: \/repo\/examples\/addon\/build\/Release\/buggy_addon\.node \(frame #7 called free directly, not through an import the free router rewrote/,
  );
  assert.equal(l[4], '==mate-guard== stack:');
  assert.match(
    l.find((x) => x.startsWith('==mate-guard==   #7 ')),
    /#7 FreeBypassingRouter \/repo\/examples\/addon\/src\/deaths\.cc:\d+ \(buggy_addon\.node\+0x/,
  );
  assert.ok(
    l.some((x) => /^==mate-guard== allocation #\d+: 40 bytes at .*backend native-heap/.test(x)),
    l.join('\n'),
  );
  assert.match(l.at(-2), /^==mate-guard== hint: glibc was given a pointer it never allocated/);
  assert.equal(
    l.at(-1),
    '==mate-guard== suppression: deadly-signal function=FreeBypassingRouter test="spec/deaths.test.js > deaths > freeBypassingRouter"',
  );
});

test("an uncaught C++ exception: type and what() in the headline; the suppression skips mate-guard's own terminate hook", () => {
  const l = lines('death-uncaught-exception');
  assert.equal(
    l[0],
    '==mate-guard== ERROR: uncaught-exception: std::out_of_range: "row 12 is past the end of the index (10 rows)" (no frame caught it: std::terminate, then SIGABRT)',
  );
  assert.match(
    l.at(-1),
    /^==mate-guard== suppression: uncaught-exception function=(ThrowUncaught|"ThrowUncaught \[clone \.cold\]") test=/,
  );
  assert.equal(
    lines('death-uncaught-exception', (e) => ({
      ...e,
      death: { ...e.death, exception: { type: 'Oops', what: null } },
    }))[0],
    '==mate-guard== ERROR: uncaught-exception: Oops (no frame caught it: std::terminate, then SIGABRT)',
    'no what() for a non-std::exception',
  );
});

test("a segfault outside guarded memory: access, address and the kernel's reason; a signal another process sent names it", () => {
  assert.equal(
    lines('death-wild-write')[0],
    '==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0xdead0000 (address not mapped), outside guarded memory: the process dies',
  );
  const sent = lines('death-wild-write', (e) => ({
    ...e,
    death: { ...e.death, code: 0, sender: 4321, address: null, access: null },
  }));
  assert.equal(sent[0], '==mate-guard== ERROR: deadly-signal: SIGSEGV (sent by process 4321 (kill)): the process dies');
  assert.equal(sent.at(-2), '==mate-guard== hint: the process died by SIGSEGV; the stack shows where');
  const gp = lines('death-wild-write', (e) => ({ ...e, death: { ...e.death, code: 0x80, address: '0x0' } }));
  // No address: neither "outside guarded memory" nor a hint to guard more (a misaligned access may be inside it).
  assert.equal(
    gp[0],
    '==mate-guard== ERROR: deadly-signal: SIGSEGV (a general-protection fault: a non-canonical pointer, an aligned SSE/AVX access of a misaligned address, or a privileged instruction; the kernel gives no address): the process dies',
  );
  assert.doesNotMatch(gp.at(-2), /--guard-native/);
  const movdqa = lines('death-wild-write', (e) => ({
    ...e,
    death: {
      ...e.death,
      code: 0x80,
      address: '0x0',
      misaligned: { instruction: 'movdqa', address: '0x7f0000001ff8', alignment: 16 },
    },
  }));
  assert.equal(
    movdqa[0],
    '==mate-guard== ERROR: deadly-signal: SIGSEGV (a general-protection fault: movdqa needs 16-byte aligned memory and was given 0x7f0000001ff8, 8 bytes past a 16-byte boundary): the process dies',
  );
});

test('deaths: a hint never asks to guard a module whose heap the dying process guarded', () => {
  const guarded = lines('death-wild-write', (e) => ({
    ...e,
    nativeHeap: { globs: ['*buggy_addon.node'], modules: ['/repo/examples/addon/build/Release/buggy_addon.node'] },
  }));
  assert.match(
    guarded.at(-2),
    /^==mate-guard== hint: the access was outside guarded memory, and \S*buggy_addon\.node's heap is guarded already: /,
  );
  const other = lines('death-wild-write', (e) => ({
    ...e,
    nativeHeap: { globs: ['*other.node'], modules: ['/repo/other.node'] },
  }));
  assert.match(
    other.at(-2),
    /covers "\*other\.node"\); the stack shows where\. Add the module whose memory it is to --guard-native/,
  );
  const off = lines('death-wild-write');
  assert.match(off.at(-2), /Guard the module's heap \(--guard-native\)/);
});

test("an overflow of a chosen module's own block: the hint speaks of the size it asked malloc/new for, not a buffer's length", () => {
  const l = lines('native-heap-overflow');
  assert.equal(
    l.find((x) => x.startsWith('==mate-guard== hint:')),
    '==mate-guard== hint: native code accessed past the end of a block it allocated: check the size it asked malloc/new for and its loop bounds',
  );
});
