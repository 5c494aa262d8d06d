// Any death of a guarded process leaves a report that names its test: a
// SIGABRT (glibc's heap checks, abort(), a failed assert), a SIGSEGV outside
// guarded memory, an uncaught C++ exception; and the runner fails that test.
// Real native code (examples/addon/src/deaths.cc) under guard-run and every
// runner; the dead process's counters reach the summary.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { BIN, ROOT, guardRun, reportLines, reportOf, run } from './helpers/run.mjs';

const GLOB = '*buggy_addon.node';
const FIX = path.join(ROOT, 'test', 'fixtures');
const SIGABRT_EXIT = 134;
const SIGSEGV_EXIT = 139;
// GCC moves abort and throw paths to a `.cold` clone of the function.
const DEATHS_CC =
  /^==mate-guard== {3}#\d+ (\w+)(?: \[clone \.cold\])? \S*examples\/addon\/src\/deaths\.cc:\d+ \(buggy_addon\.node\+0x[0-9a-f]+\)$/m;

/**
 * A died-of-something summary: the dead process's guarded allocations
 * counted. A death outside guarded memory is no violation (the program's
 * own exit status tells: here the process died, so the run fails anyway);
 * a death on guarded memory (a free that bypassed the router) is one.
 */
function assertDeadCounted(output, { onGuardedMemory = false } = {}) {
  const m = new RegExp(
    `^\\[mate-guard\\] summary: (\\d+) allocations? guarded, .*, ${onGuardedMemory ? 1 : 0} violations?, 1 process died, `,
    'm',
  ).exec(output);
  assert.ok(m, `a summary that counts the dead process:\n${output}`);
  assert.ok(Number(m[1]) > 0, `the dead process's allocations reach the summary:\n${output}`);
  const noted =
    /^\[mate-guard\] 1 death that names no guarded allocation \(reported above\): not counted as a violation; /m;
  if (onGuardedMemory) assert.doesNotMatch(output, noted);
  else assert.match(output, noted);
}

describe('mate guard-run', () => {
  const die = (kind, flags = []) => guardRun(flags, [path.join(FIX, 'core', 'die.js'), kind]);
  const TEST = (kind) => `==mate-guard== test: spec/deaths.test.js > deaths > ${kind}`;

  test('abort(): a deadly-signal report with the test, the stack down to the addon, and the process dies by SIGABRT', async () => {
    const r = await die('abort');
    assert.equal(r.code, SIGABRT_EXIT, r.output);
    const lines = reportLines(r.output);
    assert.equal(
      lines[0],
      "==mate-guard== ERROR: deadly-signal: SIGABRT (abort(): a failed assert, a library's fatal check, or abort() called directly): the process dies",
    );
    assert.equal(lines[1], TEST('abort'));
    assert.ok(lines.includes('==mate-guard== stack:'), r.output);
    // abort.c:N where libc's debug info is installed (this machine kind has it; others may not).
    assert.match(r.output, /^==mate-guard== {3}#\d+ abort (?:\S*abort\.c:\d+ )?\(libc\.so\.6\+0x[0-9a-f]+\)$/m);
    assert.equal(DEATHS_CC.exec(r.output)?.[1], 'Abort', r.output);
    assert.match(r.output, /^==mate-guard== hint: the process died by SIGABRT; the stack shows where$/m);
    assert.doesNotMatch(r.output, /not reached/);
    assertDeadCounted(r.output);
  });

  test("a failed assert: glibc's message is in the report", async () => {
    const r = await die('assertFails');
    assert.equal(r.code, SIGABRT_EXIT, r.output);
    assert.match(reportLines(r.output)[0], /ERROR: deadly-signal: SIGABRT/);
    assert.match(
      r.output,
      /^==mate-guard== glibc: .*deaths\.cc:\d+: .*AssertFails.*: Assertion `count == 42 && "the index must be in range"' failed\.$/m,
    );
    assert.equal(DEATHS_CC.exec(r.output)?.[1], 'AssertFails', r.output);
  });

  test('a wild write outside guarded memory: SIGSEGV with the address and access, the process still dies by it', async () => {
    const r = await die('wildWrite');
    assert.equal(r.code, SIGSEGV_EXIT, r.output);
    const lines = reportLines(r.output);
    assert.equal(
      lines[0],
      '==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0xdead0000 (address not mapped), outside guarded memory: the process dies',
    );
    assert.equal(lines[1], TEST('wildWrite'));
    assert.match(
      lines[3],
      /^==mate-guard== {3}#0 WildWrite \S*deaths\.cc:\d+ \(buggy_addon\.node\+0x/,
      'frame 0 is the faulting write',
    );
    assertDeadCounted(r.output);
  });

  test('a wild write in a module whose heap is guarded: the hint says it is, and asks for no setting that is on', async () => {
    const r = await die('wildWrite', ['--native', GLOB]);
    assert.equal(r.code, SIGSEGV_EXIT, r.output);
    const hint = reportLines(r.output).find((l) => l.startsWith('==mate-guard== hint: '));
    assert.equal(
      hint,
      "==mate-guard== hint: the access was outside guarded memory, and examples/addon/build/Release/buggy_addon.node's heap is guarded already: the pointer is none of its guarded allocations (a wild, null or stale pointer, memory of another module or of its own allocator, or an allocation sampled out); the stack shows where",
    );
  });

  test("an uncaught C++ exception: its type and what(), std::terminate's frames, the throwing function", async () => {
    const r = await die('throwUncaught');
    assert.equal(r.code, SIGABRT_EXIT, r.output);
    const lines = reportLines(r.output);
    assert.equal(
      lines[0],
      '==mate-guard== ERROR: uncaught-exception: std::out_of_range: "row 12 is past the end of the index (10 rows)" (no frame caught it: std::terminate, then SIGABRT)',
    );
    assert.equal(lines[1], TEST('throwUncaught'));
    assert.match(r.output, /^==mate-guard== {3}#\d+ __cxa_throw \(libstdc\+\+\.so\.6\+0x/m);
    assert.match(
      r.output,
      /^==mate-guard== {3}#\d+ ThrowUncaught(?: \[clone \.cold\])? \S*deaths\.cc:\d+ \(buggy_addon\.node\+0x/m,
    );
    assert.match(r.output, /^==mate-guard== hint: a C\+\+ exception left native code uncaught/m);
    assert.match(
      r.output,
      /^==mate-guard== suppression: uncaught-exception function=(?:ThrowUncaught|"ThrowUncaught \[clone \.cold\]") /m,
      "the suppression names the addon, not mate-guard's hook",
    );
    // libstdc++'s own message still comes first, as without mate-guard.
    assert.match(r.output, /terminate called after throwing an instance of 'std::out_of_range'/);
  });

  test('free() of a guarded pointer by a path the router does not see: glibc aborts, the report names the allocation and the module', async () => {
    const r = await die('freeBypassingRouter', ['--native', GLOB]);
    assert.equal(r.code, SIGABRT_EXIT, r.output);
    const report = reportOf(r.output, 'ERROR: deadly-signal: SIGABRT');
    assert.match(report, /^==mate-guard== glibc: munmap_chunk\(\): invalid pointer$/m);
    const m =
      /^==mate-guard== mate-guard: free\(\) of a pointer mate-guard allocated \((0x[0-9a-f]+), allocation #(\d+)\), called from a module or by a path that is not redirected: (\S+) \(frame #(\d+) called free directly/m.exec(
        report,
      );
    assert.ok(m, report);
    assert.equal(m[3], 'examples/addon/build/Release/buggy_addon.node', 'relative to the working directory');
    assert.match(
      report,
      new RegExp(`^==mate-guard== {3}#${m[4]} FreeBypassingRouter \\S*deaths\\.cc:\\d+`, 'm'),
      "the frame named is the addon's call",
    );
    assert.match(
      report,
      new RegExp(
        `^==mate-guard== allocation #${m[2]}: 40 bytes at \\[${m[1]}, 0x[0-9a-f]+\\), tail mode, alignment 16, backend native-heap`,
        'm',
      ),
    );
    assert.match(report, /^==mate-guard== allocated at:\n==mate-guard== {3}#0 FreeBypassingRouter /m);
    assert.match(report, /^==mate-guard== hint: glibc was given a pointer it never allocated/m);
  });

  test("head mode: the same free faults on the guard page before the allocation (libc reads its header); the report says who called libc's free", async () => {
    const r = await die('freeBypassingRouter', ['--native', GLOB, '--mode', 'head']);
    assert.equal(r.code, SIGSEGV_EXIT, r.output);
    const report = reportOf(r.output, 'ERROR: heap-buffer-underflow on READ');
    assert.match(report, /8 bytes before the start of allocation #(\d+) \(40 bytes, head mode\)/);
    assert.match(
      report,
      /^==mate-guard== mate-guard: libc's free\(\) was given allocation #\d+, a pointer mate-guard allocated, and read its heap header before the start; called from a module or by a path that is not redirected: examples\/addon\/build\/Release\/buggy_addon\.node /m,
    );
    assert.match(report, /^==mate-guard== hint: glibc was given a pointer it never allocated/m);
  });

  test('glibc aborting on a double free of memory it owns, with a guarded block live in the same frame: the heap-damage hint, no guarded allocation blamed', async () => {
    const r = await die('libcDoubleFree', ['--native', GLOB]);
    assert.equal(r.code, SIGABRT_EXIT, r.output);
    const report = reportOf(r.output, 'ERROR: deadly-signal: SIGABRT');
    assert.match(report, /^==mate-guard== glibc: free\(\): double free detected in tcache 2$/m);
    assert.doesNotMatch(report, /mate-guard: free\(\)|^==mate-guard== allocation #/m);
    assert.match(report, /^==mate-guard== hint: glibc found its heap damaged: memory mate-guard does not guard/m);
  });

  test('the event is JSON in the report directory: fatal, the signal, the death details', async () => {
    const r = await die('abort');
    const dir = /\[mate-guard\] reports: (.+)/.exec(r.output)?.[1];
    assert.ok(dir, r.output);
    const [file] = fs.readdirSync(dir).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
    const event = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    assert.equal(event.kind, 'deadly-signal');
    assert.equal(event.fatal, true);
    assert.equal(event.signal, 6);
    assert.equal(event.death.signal, 6);
    assert.equal(event.death.sender, event.pid, 'abort() raises it in the process itself');
    assert.equal(event.test, 'spec/deaths.test.js > deaths > abort');
    assert.ok(event.process.allocations > 0, 'the counters at death');
    assert.equal(event.delivered, 'stderr', 'the dying process printed it');
    fs.rmSync(dir, { recursive: true });
  });
});

describe('Vitest', () => {
  const cwd = path.join(FIX, 'vitest', 'deaths');
  const mateVitest = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
  const TEST = 'deaths.test.mjs > deaths > dies';

  test('forks: glibc aborts on a guarded pointer; the test is named and failed (not just "Worker exited unexpectedly"), the dead worker counted', async () => {
    const r = await run(
      process.execPath,
      [mateVitest, 'run', '--pool', 'forks', '--guard-alloc', '--guard-native', GLOB],
      { cwd, env: { FIXTURE_DEATH: 'freeBypassingRouter' } },
    );
    assert.notEqual(r.code, 0, r.output);
    assert.match(r.output, /^==mate-guard== ERROR: deadly-signal: SIGABRT /m);
    assert.ok(r.output.includes(`==mate-guard== test: ${TEST}\n`), r.output);
    assert.match(
      r.output,
      new RegExp(`^\\[mate-guard\\] test worker \\d+ died of SIGABRT: deadly-signal while running ${TEST};`, 'm'),
    );
    assert.match(
      r.output,
      /FAIL +deaths\.test\.mjs > deaths > dies\nProcessDiedError: ==mate-guard== ERROR: deadly-signal: SIGABRT/,
    );
    assert.match(r.output, /Tests +1 failed/); // the passed test's result died with the worker (Vitest batches them)
    assertDeadCounted(r.output, { onGuardedMemory: true });
  });

  test('threads: the uncaught exception ends the run; its report names the test', async () => {
    const r = await run(process.execPath, [mateVitest, 'run', '--pool', 'threads', '--guard-alloc'], {
      cwd,
      env: { FIXTURE_DEATH: 'throwUncaught' },
    });
    assert.ok(r.code === SIGABRT_EXIT || r.signal === 'SIGABRT' || r.code === 1, `${r.code} ${r.signal}\n${r.output}`);
    assert.match(
      r.output,
      /^==mate-guard== ERROR: uncaught-exception: std::out_of_range: "row 12 is past the end of the index \(10 rows\)"/m,
    );
    assert.ok(r.output.includes(`==mate-guard== test: ${TEST}\n`), r.output);
  });
});

test('Jest (mate-jest, a worker per file): the abort names the test file and test, Jest fails that test', async () => {
  const mateJest = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
  const TEST = 'test/fixtures/jest/deaths/deaths.test.js > deaths > dies';
  // A cold transform cache: Jest's cache writer loads signal-exit, whose process.on('SIGABRT') makes
  // libuv install its handler over ours (seen: no report at all, on a fresh machine's first run).
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-jest-cache-'));
  const r = await run(
    process.execPath,
    [
      mateJest,
      '--guard-alloc',
      '-w',
      '2',
      '--workerIdleMemoryLimit=1GB',
      '--cacheDirectory',
      cache,
      '-c',
      path.join(FIX, 'jest', 'deaths', 'jest.config.js'),
    ],
    { env: { FIXTURE_DEATH: 'assertFails' } },
  );
  fs.rmSync(cache, { recursive: true, force: true });
  assert.notEqual(r.code, 0, r.output);
  assert.match(r.output, /^==mate-guard== ERROR: deadly-signal: SIGABRT /m);
  assert.ok(r.output.includes(`==mate-guard== test: ${TEST}\n`), r.output);
  assert.match(
    r.output,
    new RegExp(
      `\\[mate-guard\\] Jest worker \\d+ died of SIGABRT: deadly-signal while running ${TEST.replace(/[.>]/g, '\\$&')};`,
    ),
  );
  assert.match(r.output, /● deaths › dies/);
  assert.match(r.output, /Tests: +1 failed/); // Jest gets a file's results when it ends: the crashed test is put back
  assertDeadCounted(r.output);
});

describe('Mocha', () => {
  const cwd = path.join(FIX, 'mocha');
  const TEST = 'deaths/deaths.spec.cjs > deaths > dies';
  test('serial: the wild write kills mocha itself; its report names the test', async () => {
    const r = await run(
      path.join(BIN, 'mocha'),
      ['--require', '@mate-guard/mocha', '--guard-alloc', 'deaths/deaths.spec.cjs'],
      { cwd, env: { FIXTURE_DEATH: 'wildWrite' } },
    );
    assert.ok(r.code === SIGSEGV_EXIT || r.signal === 'SIGSEGV', `${r.code} ${r.signal}\n${r.output}`);
    assert.match(
      r.output,
      /^==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0xdead0000 \(address not mapped\), outside guarded memory/m,
    );
    assert.ok(r.output.includes(`==mate-guard== test: ${TEST}\n`), r.output);
  });
  test("--parallel: the dead worker's test is reported failed with the report", async () => {
    const r = await run(
      path.join(BIN, 'mocha'),
      ['--parallel', '--require', '@mate-guard/mocha', '--guard-alloc', 'deaths/deaths.spec.cjs'],
      { cwd, env: { FIXTURE_DEATH: 'abort' } },
    );
    assert.notEqual(r.code, 0, r.output);
    assert.ok(r.output.includes(`==mate-guard== test: ${TEST}\n`), r.output);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] mocha worker \\d+ died of SIGABRT: deadly-signal while running ${TEST.replace(/[.>]/g, '\\$&')};`,
      ),
    );
    assert.match(r.output, /\d+\) deaths\n\s+dies:\n\s+==mate-guard== ERROR: deadly-signal: SIGABRT/);
    assertDeadCounted(r.output);
  });
});

test("node:test: the uncaught exception fails the test in node's own results, the summary counts the dead process", async () => {
  const r = await run(
    process.execPath,
    ['--test', '--require', '@mate-guard/node-test', '--test-reporter=spec', 'deaths/deaths.test.cjs'],
    { cwd: path.join(FIX, 'node-test'), env: { MATE_NODE_TEST_GUARD_ALLOC: '1', FIXTURE_DEATH: 'throwUncaught' } },
  );
  assert.equal(r.code, 1, r.output);
  assert.ok(r.output.includes('==mate-guard== test: deaths/deaths.test.cjs > deaths > dies\n'), r.output);
  assert.match(
    r.output,
    /✖ dies\n {4}\[Error \[ProcessDiedError\]: ==mate-guard== ERROR: uncaught-exception: std::out_of_range/,
  );
  assert.match(
    r.output,
    /node:test process \d+ died of an uncaught C\+\+ exception \(std::out_of_range\): uncaught-exception while running deaths\/deaths\.test\.cjs > deaths > dies/,
  );
  assertDeadCounted(r.output);
});

test('nativeSampleRate: every allocation call of the module is counted, guarded or not (reallocs too), and the summary shows the fraction', async () => {
  const r = await guardRun(
    ['--native', GLOB, '--native-sample-rate', '10'],
    [path.join(FIX, 'native-heap', 'coverage.js')],
  );
  assert.equal(r.code, 0, r.output);
  const { calls, guarded, unguarded } = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.equal(guarded + unguarded, calls, r.stdout);
  assert.ok(guarded > 0 && guarded < calls / 3, `${guarded} of ${calls} guarded`);
  const m =
    /^\[mate-guard\] native heap: (\d+) of (\d+) allocations of the chosen modules guarded \(([\d.]+)%\), (\d+) went to libc \(\d+ sampled out(?:, \d+ [^,]+)*\)$/m.exec(
      r.output,
    );
  assert.ok(m, r.output);
  assert.equal(Number(m[1]) + Number(m[4]), Number(m[2]));
  assert.ok(Number(m[2]) >= calls);
});

test('a process killed with no chance to report (SIGKILL) after a test ended: its counters still reach the summary', async () => {
  const r = await guardRun([], [path.join(FIX, 'core', 'killed.js')]);
  assert.equal(r.code, 137, r.output);
  assert.match(r.output, /^\[mate-guard\] summary: 5 allocations guarded, peak live 5, /m);
});
