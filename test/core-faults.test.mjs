// Each detection of the native core, through `mate guard-run` on real
// native code, asserted on what a user sees: exit status and report text.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { accessSite } from './helpers/native-frames.mjs';
import { firstAllocationFrame, guardRun, rerunReportOf, reportLines, run, ROOT } from './helpers/run.mjs';

const script = (name) => path.join(ROOT, 'examples', 'scripts', name);
const fixture = (name) => path.join(ROOT, 'test', 'fixtures', 'core', name);
const SIGSEGV_EXIT = 139;

test('overflow by one faults at the first bad byte in tail mode', async () => {
  const r = await guardRun([], [script('overflow.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
  );
  assert.ok(
    lines.some((l) =>
      /allocation #\d+: 64 bytes at \[0x[0-9a-f]+, 0x[0-9a-f]+\), tail mode, alignment 1, backend host/.test(l),
    ),
  );
  assert.ok(
    lines.some((l) => l.includes('GUARD 4096 B')),
    'slot picture',
  );
  assert.ok(
    lines.some((l) => /\^ WRITE/.test(l)),
    'access marked',
  );
  assert.ok(
    lines.some((l) => l.includes('overflow.js:5')),
    'JS allocation stack names the line',
  );
  assert.match(r.output, accessSite('overflow'), 'the access block names the addon function and line');
  assert.match(
    firstAllocationFrame(r.output),
    /^==mate-guard==   at Object\.<anonymous> \(.*examples\/scripts\/overflow\.js:5:\d+\)$/,
  );
  assert.doesNotMatch(r.output, /not reached/);
  assert.match(r.output, /\[mate-guard\] summary: \d+ allocations? guarded, .*1 violation/);
});

test('underflow by one faults at the first bad byte in head mode', async () => {
  const r = await guardRun(['--mode', 'head'], [script('underflow.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  assert.match(
    reportLines(r.output)[0],
    /ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
  );
});

test('underflow in tail mode is caught by the canary before the start, with a hint', async () => {
  const r = await guardRun([], [script('underflow.js')]);
  assert.equal(r.code, 1, r.output);
  const text = reportLines(r.output).join('\n');
  assert.match(
    text,
    /ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
  );
  assert.match(
    text,
    /hint: canary damaged before the start in tail mode: rerun with --guard-mode head to fault at the first bad access/,
  );
});

test('overflow in head mode is caught by the canary past the end, with a hint', async () => {
  const r = await guardRun(['--mode', 'head'], [script('overflow.js')]);
  assert.equal(r.code, 1, r.output);
  const text = reportLines(r.output).join('\n');
  assert.match(
    text,
    /ERROR: canary-corruption: 1 byte past the end of allocation #\d+ \(64 bytes, head mode\) damaged/,
  );
  assert.match(text, /rerun with --guard-mode tail/);
});

test('damage past the end in head mode of a size the alignment does not divide reruns in tail mode byte-exact, where the write faults', async () => {
  const r = await guardRun(['--mode', 'head'], [script('gap-overflow.js')]);
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    /ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, head mode\) damaged\n(?:.*\n)*?==mate-guard== hint: canary damaged past the end in head mode: rerun in tail mode byte-exact to fault at the first bad access \(--guard-mode=tail --guard-alignment=1, mate guard-run --mode tail --alignment 1, or installGuardAllocator\(\{ mode: 'tail', alignment: 1 \}\)\)\n/,
  );
  assert.match(
    r.output,
    /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, head mode\) faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/,
  );
});

test('canary damage is rerun once in the faulting mode; the fault is shown under the report and filed with it', async () => {
  const r = await guardRun([], [script('underflow.js')]);
  assert.equal(r.code, 1, r.output);
  const canary = r.output.indexOf('ERROR: canary-corruption: 1 byte before the start');
  const announce = r.output.indexOf(
    '[mate-guard] rerunning the command in head mode to find the access behind a canary report (off: --no-rerun)',
  );
  assert.ok(canary >= 0 && announce > canary, r.output);
  assert.match(
    r.output,
    /\[mate-guard\] rerun in head mode: the canary-corruption of allocation #\d+ \(64 bytes, tail mode\) faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
  );
  const dir = /\[mate-guard\] reports: (.+)/.exec(r.output)[1];
  const [file] = fs.readdirSync(dir).filter((f) => f.startsWith('mate-guard-'));
  const event = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  assert.equal(event.kind, 'canary-corruption');
  assert.equal(event.rerun.mode, 'head');
  assert.equal(event.rerun.fault.kind, 'heap-buffer-underflow');
  assert.equal(event.rerun.fault.fatal, true);
  assert.match(
    rerunReportOf(r.output, 'head mode'),
    accessSite('underflow'),
    "the rerun's fault names the addon function and line",
  );
  fs.rmSync(dir, { recursive: true });
});

test('--no-rerun: canary damage is reported without a rerun', async () => {
  const r = await guardRun(['--no-rerun'], [script('gap-overflow.js')]);
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /ERROR: canary-corruption: 2 bytes past the end/);
  assert.doesNotMatch(r.output, /\[mate-guard\] rerun/);
});

test('an overflow inside the alignment gap is caught by the canary', async () => {
  const r = await guardRun([], [script('gap-overflow.js')]);
  assert.equal(r.code, 1, r.output);
  const text = reportLines(r.output).join('\n');
  assert.match(
    text,
    /ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged/,
  );
  assert.match(text, /gap \(canary\) 3 B/);
  assert.match(text, /alignment gap \(alignment 16\)/);
  assert.match(rerunReportOf(r.output, 'tail mode with alignment 1'), accessSite('gap'));
});

test('alignment 1 is byte-exact: the same write faults', async () => {
  const r = await guardRun(['--alignment', '1'], [script('gap-overflow.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  assert.match(
    reportLines(r.output)[0],
    /heap-buffer-overflow on WRITE .*: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/,
  );
});

test('use-after-free through a retained pointer faults and says who freed it', async () => {
  const r = await guardRun([], ['--expose-gc', script('use-after-free.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const text = reportLines(r.output).join('\n');
  assert.match(
    text,
    /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(256 bytes, tail mode\)/,
  );
  assert.match(text, /freed by the garbage collector/);
  assert.match(text, /use-after-free\.js:\d+/);
  assert.match(r.output, accessSite('use-after-free'));
});

test('a stale write to any buffer of one collection burst of 3,000 frees faults as use-after-free', async () => {
  // The closer quarantines a burst a chunk at a time: the first, a middle and the last buffer made.
  for (const which of ['first', 'middle', 'last']) {
    const r = await guardRun([], ['--expose-gc', fixture('uaf-in-burst.js'), which]);
    assert.equal(r.code, SIGSEGV_EXIT, `${which}: ${r.output}`);
    const text = reportLines(r.output).join('\n');
    assert.match(
      text,
      /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(16 bytes, tail mode\)/,
      which,
    );
    assert.match(text, /freed by the garbage collector/, which);
    assert.doesNotMatch(r.output, /not reached under mate-guard/, which);
  }
});

test('the report names the running test and is written as JSON before the process dies', async () => {
  const r = await guardRun([], [fixture('named-test.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  const lines = reportLines(r.output);
  assert.equal(lines[1], '==mate-guard== test: spec/io.test.js > reader > reads a header');
  const dir = /\[mate-guard\] reports: (.+)/.exec(r.output)?.[1];
  assert.ok(dir, r.output);
  const files = fs.readdirSync(dir).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f)); // beside run.json
  assert.equal(files.length, 1);
  const event = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  assert.equal(event.kind, 'heap-buffer-overflow');
  assert.equal(event.access, 'WRITE');
  assert.equal(event.fatal, true);
  assert.equal(event.test, 'spec/io.test.js > reader > reads a header');
  assert.equal(event.allocation.size, 32);
  assert.equal(event.text, lines.join('\n') + '\n');
  fs.rmSync(dir, { recursive: true });
});

test('a fault on a libuv pool thread is reported', async () => {
  const r = await guardRun([], [fixture('pool-thread.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  assert.match(
    reportLines(r.output)[0],
    /heap-buffer-overflow on WRITE .*1 byte past the end of allocation #\d+ \(1600 bytes, tail mode\)/,
  );
  assert.doesNotMatch(r.output, /not reached/);
});

test('a fault in a worker_threads Worker is reported', async () => {
  const r = await guardRun([], [fixture('worker-thread.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  assert.match(
    reportLines(r.output)[0],
    /heap-buffer-overflow on WRITE .*1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
  );
});

test('WebAssembly out-of-bounds traps still throw RuntimeError; a clean run has no report', async () => {
  const r = await guardRun([], [script('clean.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /wasm trap ok \(memory access out of bounds\)/);
  assert.equal(reportLines(r.output).length, 0);
  assert.match(r.output, /\[mate-guard\] summary: \d+ allocations guarded, .*0 violations/);
});

test('a segfault that is not ours still kills the process by SIGSEGV, as without mate-guard, and leaves a deadly-signal report', async () => {
  const plain = await run(process.execPath, [fixture('null-write.js')]);
  const guarded = await guardRun([], [fixture('null-write.js')]);
  assert.equal(plain.signal, 'SIGSEGV');
  assert.equal(guarded.code, SIGSEGV_EXIT, guarded.output);
  const lines = reportLines(guarded.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0x[01] \(address not mapped\), outside guarded memory: the process dies$/,
    guarded.output,
  );
  assert.match(lines.join('\n'), /^==mate-guard== {3}#0 NullWrite \S*buggy\.cc:\d+ \(buggy_addon\.node\+0x/m);
});

test('any access to a zero-byte allocation faults', async () => {
  const r = await guardRun([], [fixture('zero-byte.js')]);
  // Node-API hands native code NULL for an empty buffer, so this is a null
  // dereference (no mate-guard report can name it), never a silent read.
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
});

test('canary damage found when the GC frees a buffer is kept for the next check, once', async () => {
  const r = await guardRun([], ['--expose-gc', fixture('finalizer-canary.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /found at next check: 1 canary-corruption/);
  assert.match(
    r.output,
    /==mate-guard== ERROR: canary-corruption: 3 bytes before the start of allocation #\d+ \(24 bytes, tail mode\) damaged/,
  );
  assert.match(r.output, /reported again: 0/);
});

test('guard-run guards every Node process the command starts, nested ones too', async () => {
  const r = await guardRun(
    [],
    [
      '-e',
      `
    const r = require('node:child_process').spawnSync(process.execPath, [${JSON.stringify(script('overflow.js'))}], { stdio: 'inherit' });
    process.exitCode = r.signal ? 100 : 0;
  `,
    ],
  );
  assert.equal(r.code, 100, r.output);
  assert.match(reportLines(r.output)[0], /ERROR: heap-buffer-overflow on WRITE .*\(64 bytes, tail mode\)/);
});

test('worker threads are guarded and the summary counts their shared allocator once', async () => {
  const r = await guardRun([], [fixture('threads-summary.js')]);
  assert.equal(r.code, 0, r.output);
  assert.equal(r.output.match(/worker guarded: true/g)?.length, 3, r.output);
  const m = /\[mate-guard\] summary: (\d+) allocations guarded/.exec(r.output);
  assert.ok(m, r.output);
  assert.ok(Number(m[1]) >= 4000 && Number(m[1]) < 4100, `counted once per process, not per thread: ${m[1]}`);
});
