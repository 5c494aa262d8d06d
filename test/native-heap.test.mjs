// The native heap of a chosen module (`mate guard-run --native <glob>`),
// on the real example addon: its own malloc/calloc/realloc/new[]/vector
// memory is guarded, bad frees are reported, Node's own allocations and
// everything else keep working untouched.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ADDON, lineOf } from './helpers/native-frames.mjs';
import { guardRun, MATE, reportLines, run, ROOT } from './helpers/run.mjs';

const SIGSEGV_EXIT = 139;
const NATIVE = ['--native', '*buggy_addon.node'];
const script = path.join(ROOT, 'examples', 'scripts', 'native-heap.js');
const fixture = (name) => path.join(ROOT, 'test', 'fixtures', 'native-heap', name);
const bug = (name, flags = []) => guardRun([...NATIVE, ...flags], [script, name]);
const lastJson = (output) =>
  JSON.parse(
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop(),
  );

/** A symbolized frame line of the example addon's native_heap.cc: `#0 MallocOverflow examples/addon/src/native_heap.cc:42 (buggy_addon.node+0x…)`. */
const inNativeHeapCc = (fn) =>
  new RegExp(
    `^==mate-guard== {3}#0(?:\\.\\d+)? ${fn} \\S*examples/addon/src/native_heap\\.cc:\\d+ \\(buggy_addon\\.node\\+0x[0-9a-f]+\\)$`,
  );

/** The frames under a `<title>:` line of a report. */
function framesAfter(lines, title) {
  const at = lines.findIndex((l) => l === `==mate-guard== ${title}:`);
  assert.ok(at >= 0, `report has "${title}:"\n${lines.join('\n')}`);
  const out = [];
  for (let i = at + 1; i < lines.length && /^==mate-guard== {3}#\d+(?:\.\d+)? /.test(lines[i]); i++) out.push(lines[i]);
  assert.ok(out.length > 0, `"${title}:" lists frames`);
  return out;
}

for (const [name, fn] of [
  ['mallocOverflow', 'MallocOverflow'],
  ['callocOverflow', 'CallocOverflow'],
  ['reallocOverflow', 'ReallocOverflow'],
  ['newArrayOverflow', 'NewArrayOverflow'],
  ['vectorOverflow', 'VectorOverflow'],
]) {
  test(`one byte past the end of memory the module allocated (${name}) faults in tail mode`, async () => {
    const r = await bug(name);
    assert.equal(r.code, SIGSEGV_EXIT, r.output);
    const lines = reportLines(r.output);
    assert.match(
      lines[0],
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
    );
    assert.ok(
      lines.some((l) =>
        /: 64 bytes at \[0x[0-9a-f]+, 0x[0-9a-f]+\), tail mode, alignment 16, backend native-heap/.test(l),
      ),
      r.output,
    );
    const alloc = framesAfter(lines, 'allocated at');
    // #0 is the allocating function, or (std::vector) the library code inlined into it, with #0.N the function itself.
    assert.ok(
      alloc.filter((l) => /^==mate-guard== {3}#0[ .]/.test(l)).some((l) => inNativeHeapCc(fn).test(l)),
      `the allocation frame is the allocating function, with file:line:\n${alloc.join('\n')}`,
    );
    assert.ok(lines.includes('==mate-guard== access:'), 'and the access block');
    assert.doesNotMatch(r.output, /returned/);
  });
}

test('one byte before memory the module allocated faults in head mode', async () => {
  const r = await bug('mallocUnderflow', ['--mode', 'head']);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
  );
  assert.match(framesAfter(lines, 'allocated at')[0], inNativeHeapCc('MallocUnderflow'));
});

test('in tail mode the underflow lands in the canary, found when the module frees the block', async () => {
  const r = await bug('mallocUnderflow');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /mallocUnderflow: returned/);
  assert.match(
    reportLines(r.output).join('\n'),
    /ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged[\s\S]*backend native-heap/,
  );
});

test('use after free of module memory faults and says where it was allocated and freed', async () => {
  const r = await bug('useAfterFree');
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(64 bytes, tail mode\)/,
  );
  assert.match(framesAfter(lines, 'allocated at')[0], inNativeHeapCc('UseAfterFree'));
  assert.match(framesAfter(lines, 'freed at')[0], inNativeHeapCc('UseAfterFree'));
});

test('a double free is reported with both frees, ignored, and the program goes on', async () => {
  const r = await bug('doubleFree');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /doubleFree: returned/);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: double-free of 0x[0-9a-f]+: allocation #\d+ \(64 bytes, tail mode\) was already freed$/,
  );
  framesAfter(lines, 'freed again at');
  assert.match(framesAfter(lines, 'allocated at')[0], inNativeHeapCc('DoubleFree'));
  assert.match(framesAfter(lines, 'first freed at')[0], inNativeHeapCc('DoubleFree'));
  assert.match(r.output, /\[mate-guard\] summary: .*1 violation/);
});

test('freeing a pointer into the middle of an allocation is an invalid free, reported and ignored', async () => {
  const r = await bug('invalidFree');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /invalidFree: returned/);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: invalid-free of 0x[0-9a-f]+: offset 8 inside allocation #\d+ \(64 bytes, tail mode\), not its start$/,
  );
  assert.match(framesAfter(lines, 'free called at')[0], inNativeHeapCc('InvalidFree'));
  assert.match(framesAfter(lines, 'allocated at')[0], inNativeHeapCc('InvalidFree'));
});

test('the JSON event carries the backend and the native frames as module + offset', async () => {
  const r = await bug('doubleFree');
  const dir = /\[mate-guard\] reports: (.+)/.exec(r.output)?.[1];
  assert.ok(dir, r.output);
  const file = fs.readdirSync(dir).find((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
  const event = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(event.kind, 'double-free');
  assert.equal(event.backend, 'native-heap');
  assert.equal(event.allocation.backend, 'native-heap');
  assert.equal(event.allocation.freed, true);
  for (const [stack, fn] of [
    [event.accessStack, /./],
    [event.allocation.allocFrames, /DoubleFree/],
    [event.allocation.freeFrames, /DoubleFree/],
  ]) {
    const frames = stack?.frames;
    assert.ok(Array.isArray(frames) && frames.length > 0, JSON.stringify(event));
    assert.equal(frames[0].module, ADDON);
    assert.match(frames[0].pc, /^0x[0-9a-f]+$/);
    assert.equal(BigInt(frames[0].pc) - BigInt(frames[0].offset) > 0n, true);
    assert.equal(frames[0].returnAddress, true);
    const names = frames.flatMap((f) => [f.function, ...(f.inlined ?? []).map((i) => i.function)]);
    // The second free is a tail call (DoubleFree's own frame is gone): its stack starts in the caller.
    assert.ok(
      names.some((n) => fn.test(n ?? '')),
      `symbolized when the report was rendered: ${names.join(', ')}`,
    );
  }
});

test('an overflow on a libuv pool thread faults there; its allocation has native frames and no JS caller', async () => {
  const r = await bug('poolThreadOverflow');
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(128 bytes, tail mode\)/,
  );
  assert.ok(framesAfter(lines, 'allocated at').length > 0);
  assert.ok(!lines.includes('==mate-guard== called from JS at:'), 'no JS runs on a pool thread');
});

/** The JS frames under "called from JS at:" in one report, as `function file:line`. */
function jsCallers(lines) {
  const at = lines.indexOf('==mate-guard== called from JS at:');
  assert.ok(at >= 0, `report has "called from JS at:"\n${lines.join('\n')}`);
  const out = [];
  for (let i = at + 1; i < lines.length; i++) {
    const m = /^==mate-guard== {3}at (\S+) \((\S+):(\d+):\d+\)$/.exec(lines[i]);
    if (!m) break;
    out.push(`${m[1]} ${path.basename(m[2])}:${m[3]}`);
  }
  return out;
}

test('a native allocation made inside a call from JS names its JS caller: two lines through one helper each get their own', async () => {
  const r = await guardRun(NATIVE, [fixture('js-stack.js'), 'sites']);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const line = (text) => lineOf(fixture('js-stack.js'), text);
  const helper = `viaHelper js-stack.js:${line('return fn();')}`;
  const reports = r.output
    .split('==mate-guard== ERROR: ')
    .slice(1)
    .map((t) => reportLines(`==mate-guard== ERROR: ${t}`));
  const doubles = reports.filter((l) => l[0].includes('double-free'));
  assert.equal(doubles.length, 3, r.output);
  // The second and third come from the same stack as the first (known by its frames, not captured again).
  for (const l of doubles)
    assert.deepEqual(jsCallers(l), [
      helper,
      `Object.<anonymous> js-stack.js:${line('viaHelper(addon.nativeHeap.doubleFree)')}`,
    ]);
  const overflow = reports.find((l) => l[0].includes('heap-buffer-overflow'));
  assert.ok(overflow, r.output);
  assert.deepEqual(jsCallers(overflow), [
    helper,
    `Object.<anonymous> js-stack.js:${line('viaHelper(addon.nativeHeap.mallocOverflow)')}`,
  ]);
});

test('a native allocation made after the addon called back into JS, or in another call from the same place, names its own JS caller', async () => {
  const r = await guardRun(NATIVE, [fixture('js-stack.js'), 'nested']);
  assert.equal(r.code, 1, r.output); // violations found, the program ran to its end
  const line = (text) => lineOf(fixture('js-stack.js'), text);
  const around = `around js-stack.js:${line('const around =')}`;
  const first = `Object.<anonymous> js-stack.js:${line('// first')}`;
  const second = `Object.<anonymous> js-stack.js:${line('// second')}`;
  const reports = r.output
    .split('==mate-guard== ERROR: ')
    .slice(1)
    .map((t) => reportLines(`==mate-guard== ERROR: ${t}`));
  assert.ok(
    reports.every((l) => l[0].includes('double-free')),
    r.output,
  );
  // Every frame, the callback's unnamed one too.
  const callers = (lines) =>
    lines
      .slice(lines.indexOf('==mate-guard== called from JS at:') + 1)
      .map((l) => /^==mate-guard== {3}at (?:(\S+) \()?(\S+?):(\d+):\d+\)?$/.exec(l))
      .filter(Boolean)
      .map((m) => `${m[1] ?? '<anonymous>'} ${path.basename(m[2])}:${m[3]}`);
  assert.deepEqual(reports.map(callers), [
    [around, first], // before the callback
    [`viaHelper js-stack.js:${line('return fn();')}`, `<anonymous> js-stack.js:${line('// first')}`, around, first], // the callback's own call
    [around, first], // after it: the outer call's stack again, not the callback's
    [around, second], // the next call: its own line, though its exit frame lies where the first call's did
    [around, second],
  ]);
  assert.match(r.stdout, /^same call: [1-9]\d*$/m, 'an allocation of the same call reused its stack');
});

test('with --capture-stacks=false a native allocation has its native frames only', async () => {
  const r = await bug('mallocOverflow', ['--capture-stacks=false']);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.match(framesAfter(lines, 'allocated at')[0], inNativeHeapCc('MallocOverflow'));
  assert.ok(!lines.includes('==mate-guard== called from JS at:'), r.output);
});

test('an exception the addon throws before it allocates still reaches the JS caller', async () => {
  const r = await guardRun(NATIVE, [fixture('js-stack.js'), 'throw']);
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /^caught: thrown by the addon$/m);
  assert.match(r.stdout, /^guarded native allocations: 1$/m, 'the allocation after the throw was guarded');
});

test("Node's own allocations are not guarded: the native count is exactly what the addon allocated", async () => {
  const r = await guardRun(NATIVE, [fixture('count.js')]);
  assert.equal(r.code, 0, r.output);
  const { expected, counted, made } = lastJson(r.stdout);
  assert.equal(made, 10, 'every allocation form worked');
  assert.equal(counted, expected);
});

test('memory libc allocated for the module (getline, asprintf, realpath, open_memstream) is freed by libc', async () => {
  const r = await guardRun(NATIVE, [fixture('libc-owned.js')]);
  assert.equal(r.code, 0, r.output);
  const s = lastJson(r.stdout);
  assert.ok(s.total > 30, r.stdout);
  assert.ok(s.foreignFrees >= 4, r.stdout);
  assert.equal(s.badFrees, 0);
  assert.doesNotMatch(r.output, /==mate-guard==/);
});

test('crypto, zlib, worker_threads, child processes and threads work with the module redirected', async () => {
  const r = await guardRun(NATIVE, [fixture('node-works.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /node works: crypto, zlib, child process, worker thread, addon threads, pool thread/);
  assert.doesNotMatch(r.output, /==mate-guard==|warning/);
});

test('nativeSampleRate N guards about one allocation in N; the rest go to libc', async () => {
  const r = await guardRun([...NATIVE, '--native-sample-rate', '10'], [fixture('count.js')]);
  assert.equal(r.code, 0, r.output);
  const { expected, counted } = lastJson(r.stdout);
  assert.ok(counted > 0 && counted < expected / 3, `${counted} of ${expected} guarded`);
});

test('--log-allocations names each redirected module and logs native allocations with backend=native-heap', async () => {
  const r = await guardRun([...NATIVE, '--log-allocations'], [fixture('count.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(
    r.stderr,
    /\[mate-guard\] native heap: \/.*buggy_addon\.node: \d+ import slots redirected \(malloc, .*free.*_Znwm/,
  );
  assert.match(
    r.stderr,
    /\[mate-guard\] alloc #\d+ ptr=0x[0-9a-f]+ requested=64 mapped=8192 mode=tail backend=native-heap test=""/,
  );
  assert.match(r.stderr, /\[mate-guard\] free #\d+ ptr=0x[0-9a-f]+ requested=64 mode=tail backend=native-heap/);
});

test('a glob that matches no loaded module gets one warning at the end of the run', async () => {
  const r = await guardRun([...NATIVE, '--native', '*no_such_addon.node'], [fixture('count.js')]);
  assert.equal(r.code, 0, r.output);
  const warnings = r.stderr.split('\n').filter((l) => l.includes('matched no loaded module'));
  assert.deepEqual(warnings.length, 1, r.stderr);
  assert.match(warnings[0], /^\[mate-guard\] warning: native heap: "\*no_such_addon\.node" matched no loaded module/);
});

test('installGuardAllocator({ nativeModules }) patches modules loaded before install and after', async () => {
  const r = await run(process.execPath, [fixture('in-process.js')]);
  assert.equal(r.code, 0, r.output);
  assert.deepEqual(lastJson(r.stdout), { early: 100, late: 50 });
  assert.match(r.stderr, /warning: native heap: "\*no_such_module\.node" matched no loaded module/);
});

for (const [config, message] of [
  [{ nativeModules: 5 }, 'nativeModules: 5 is not a list'],
  [{ nativeSampleRate: 0 }, 'nativeSampleRate: 0 is not allowed; use an integer from 1'],
  [{ nativeSampleRate: 2.5 }, 'nativeSampleRate: 2.5 is not allowed'],
]) {
  test(`bad native heap config ${JSON.stringify(config)} throws a clear error`, async () => {
    const r = await run(process.execPath, [
      '-e',
      `
      const c = require(${JSON.stringify(path.join(ROOT, 'packages', 'core-native'))});
      try { c.installGuardAllocator(${JSON.stringify(config)}); console.log('no error'); }
      catch (e) { console.log(e.name + ': ' + e.message); }
    `,
    ]);
    assert.ok(r.output.includes(`GuardConfigError: ${message}`), r.output);
  });
}

for (const [args, message] of [
  [['guard-run', '--native', '--', 'node', '-v'], 'mate: --native needs a value'],
  [['guard-run', '--native-sample-rate', '0', '--', 'node', '-v'], 'mate: --native-sample-rate: "0" is not allowed'],
]) {
  test(`mate ${args.join(' ')} exits 2 with a clear error`, async () => {
    const r = await run(process.execPath, [MATE, ...args]);
    assert.equal(r.code, 2, r.output);
    assert.ok(r.stderr.includes(message), r.stderr);
  });
}

test('native-heap reports name the running test (a bad free at the next check, a fault at once)', async () => {
  const r = await guardRun(NATIVE, [fixture('named-test.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  const dbl = lines.findIndex((l) => l.includes('ERROR: double-free'));
  assert.equal(lines[dbl + 1], '==mate-guard== test: spec/heap.test.js > cache > frees twice');
  assert.ok(lines.includes('==mate-guard== allocated during test: spec/heap.test.js > cache > frees twice'));
  const fault = lines.findIndex((l) => l.includes('ERROR: heap-buffer-overflow'));
  assert.ok(fault > dbl, r.output);
  assert.equal(lines[fault + 1], '==mate-guard== test: spec/heap.test.js > cache > writes past the end');
});
