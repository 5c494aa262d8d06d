// The run lifecycle in-process: one exit-code rule, and the end of a run
// from the events its processes left (recorded events, no runner).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const core = path.join(ROOT, 'packages/core-native/dist');
const { GuardedRun, runExitCode } = await import(path.join(core, 'run/lifecycle.js'));
const { readHandoff } = await import(path.join(core, 'settings/handoff.js'));
const { defaultSettings } = await import(path.join(core, 'settings/table.js'));
const event = (name, extra = {}) => ({
  ...JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events', `${name}.json`), 'utf8')),
  ...extra,
});

test("exit code: the command's failure wins; a clean exit fails when a violation reached no caller", () => {
  assert.equal(runExitCode(3, []), 3);
  assert.equal(runExitCode(139, [event('overflow')]), 139);
  assert.equal(runExitCode(0, []), 0);
  assert.equal(runExitCode(0, [event('underflow', { delivered: 'caller' })]), 0, 'a caller (a test) had it');
  assert.equal(runExitCode(0, [event('underflow', { delivered: 'stderr' })]), 1, 'found at exit');
  assert.equal(runExitCode(0, [event('overflow')]), 1, 'a process died of it');
});

test('a run hands its settings to children, and its end names crashes, counts, and keeps the reports', () => {
  const env = {};
  const run = GuardedRun.start({
    runner: 'unit',
    settings: { ...defaultSettings({}), enabled: true },
    explicit: ['enabled'],
    env,
  });
  const handoff = readHandoff(env);
  assert.equal(handoff.settings.reportDir, run.dir);
  assert.equal(handoff.ownerPid, process.pid);
  const crash = { ...event('overflow'), pid: 4242, test: 'a.test.js > it' };
  fs.writeFileSync(path.join(run.dir, 'mate-guard-4242-1.json'), JSON.stringify(crash));
  fs.writeFileSync(
    path.join(run.dir, 'stats-77-0.json'),
    JSON.stringify({ pid: 77, threadId: 0, allocations: 10, peakLive: 4, fallbacks: 0, skippedByTag: 2 }),
  );
  const { text, exitCode } = run.finish({
    status: 0,
    attribution: { label: () => 'test worker', reprint: () => true },
  });
  assert.equal(exitCode, 1);
  const lines = text.split('\n');
  assert.match(
    lines[0],
    /^\[mate-guard\] test worker 4242 was killed by a guard fault: heap-buffer-overflow on allocation #1 \(64 bytes, tail mode\) while running a\.test\.js > it; full report above, JSON in .*mate-guard-4242-1\.json$/,
  );
  assert.equal(lines[1], '[mate-guard] its report, from that JSON file:');
  assert.match(
    lines[2],
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    'rendered from the event when its printer left no text',
  );
  assert.ok(
    lines.includes(
      '[mate-guard] summary: 11 allocations guarded, peak live 4, 0 unguarded fallbacks, 1 violation, 1 process died, 2 tests skipped by tag',
    ),
    text,
  );
  assert.ok(lines.includes(`[mate-guard] reports: ${run.dir}`));
  assert.ok(fs.existsSync(run.dir), 'kept: it holds a violation');
  fs.rmSync(run.dir, { recursive: true });
});

test('a clean run leaves nothing behind', () => {
  const run = GuardedRun.start({ runner: 'unit', settings: defaultSettings({}), env: {} });
  const { text, exitCode } = run.finish({ status: 0 });
  assert.equal(exitCode, 0);
  assert.equal(
    text,
    '[mate-guard] summary: 0 allocations guarded, peak live 0, 0 unguarded fallbacks, 0 violations, 0 tests skipped by tag\n',
  );
  assert.ok(!fs.existsSync(run.dir));
});

test('a run in which no process installed the guard ends with one warning line and the fix, not a summary', () => {
  const run = GuardedRun.start({ runner: 'unit', settings: { ...defaultSettings({}), enabled: true }, env: {} });
  const { text, exitCode } = run.finish({ status: 0, nothingGuardedFix: 'load the plugin' });
  assert.equal(exitCode, 0);
  assert.equal(
    text,
    '[mate-guard] warning: guarding was asked for, but no test process was guarded (nothing installed the guard allocator): load the plugin\n',
  );
  // One process that guarded (its counters file) is enough for the summary.
  const again = GuardedRun.start({ runner: 'unit', settings: { ...defaultSettings({}), enabled: true }, env: {} });
  fs.writeFileSync(
    path.join(again.dir, 'stats-77-0.json'),
    JSON.stringify({ pid: 77, threadId: 0, allocations: 0, peakLive: 0, fallbacks: 0, skippedByTag: 0 }),
  );
  assert.match(
    again.finish({ status: 0, nothingGuardedFix: 'load the plugin' }).text,
    /^\[mate-guard\] summary: 0 allocations guarded/,
  );
});

test('the summary counts the processes a guard fault killed, once each', () => {
  const run = GuardedRun.start({ runner: 'unit', settings: { ...defaultSettings({}), enabled: true }, env: {} });
  for (const [pid, n] of [
    [501, 1],
    [502, 1],
    [502, 2],
  ]) {
    fs.writeFileSync(
      path.join(run.dir, `mate-guard-${pid}-${n}.json`),
      JSON.stringify({ ...event('overflow'), pid, fatal: n === 1 }),
    );
  }
  const { text } = run.finish({ status: 1 });
  assert.match(text, /^\[mate-guard\] summary: .*, 3 violations, 2 processes died, 0 tests skipped by tag$/m);
  fs.rmSync(run.dir, { recursive: true, force: true });
});

test('a run given a report directory makes its own inside it and keeps it, clean or not', () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-kept-'));
  try {
    const run = GuardedRun.start({ runner: 'unit', settings: { ...defaultSettings({}), reportDir: parent }, env: {} });
    assert.equal(path.dirname(run.dir), parent);
    assert.equal(JSON.parse(fs.readFileSync(path.join(run.dir, 'run.json'), 'utf8')).runner, 'unit');
    const { text, exitCode } = run.finish({ status: 0 });
    assert.equal(exitCode, 0);
    assert.ok(text.includes(`[mate-guard] reports: ${run.dir}\n`));
    assert.ok(fs.existsSync(run.dir), 'kept for mate report');
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

test('watch mode: each round reports what is new since the last one, counters included', () => {
  const run = GuardedRun.start({ runner: 'unit', settings: defaultSettings({}), env: {} });
  const stats = (allocations) =>
    fs.writeFileSync(
      path.join(run.dir, 'stats-77-0.json'),
      JSON.stringify({ pid: 77, threadId: 0, allocations, peakLive: 4, fallbacks: 0, skippedByTag: 0 }),
    );
  stats(10);
  fs.writeFileSync(
    path.join(run.dir, 'mate-guard-77-1000001.json'),
    JSON.stringify({ ...event('underflow'), pid: 77, delivered: 'caller' }),
  );
  const first = run.finish({ status: 1, more: true });
  assert.match(first.text, /summary: 10 allocations guarded, .* 1 violation,/);
  stats(25); // the same process (in band), 15 more
  const second = run.finish({ status: 0, more: true });
  assert.match(second.text, /summary: 15 allocations guarded, .* 0 violations,/);
  assert.equal(second.exitCode, 0);
  assert.ok(fs.existsSync(run.dir), 'one directory for the whole session');
  fs.rmSync(run.dir, { recursive: true, force: true });
});

test('a process that died of a signal: named with its cause, and its counters at death reach the summary over an earlier counters file', () => {
  const run = GuardedRun.start({ runner: 'unit', settings: { ...defaultSettings({}), enabled: true }, env: {} });
  const death = event('death-free-bypassing-router', {
    pid: 601,
    test: 'b.test.js > dies',
    process: { allocations: 40, peakLive: 9, fallbacks: 0, nativeAllocations: 12, nativeUnguarded: 108 },
  });
  fs.writeFileSync(path.join(run.dir, 'mate-guard-601-1.json'), JSON.stringify(death));
  // Flushed after an earlier test file (Jest does): fewer than at its death.
  fs.writeFileSync(
    path.join(run.dir, 'stats-601-0.json'),
    JSON.stringify({
      pid: 601,
      threadId: 0,
      allocations: 5,
      peakLive: 2,
      fallbacks: 0,
      skippedByTag: 1,
      nativeAllocations: 1,
      nativeUnguarded: 9,
    }),
  );
  fs.writeFileSync(
    path.join(run.dir, 'stats-602-0.json'),
    JSON.stringify({
      pid: 602,
      threadId: 0,
      allocations: 7,
      peakLive: 3,
      fallbacks: 0,
      skippedByTag: 0,
      nativeAllocations: 3,
      nativeUnguarded: 27,
    }),
  );
  const { text, exitCode } = run.finish({ status: 1, attribution: { label: () => 'test worker' } });
  assert.equal(exitCode, 1);
  const lines = text.split('\n');
  assert.match(
    lines[0],
    /^\[mate-guard\] test worker 601 died of SIGABRT: deadly-signal while running b\.test\.js > dies; full report above, JSON in .*mate-guard-601-1\.json$/,
  );
  assert.ok(
    lines.includes(
      '[mate-guard] summary: 47 allocations guarded, peak live 9, 0 unguarded fallbacks, 1 violation, 1 process died, 1 test skipped by tag',
    ),
    text,
  );
  assert.ok(
    lines.includes(
      '[mate-guard] native heap: 15 of 150 allocations of the chosen modules guarded (10.0%), 135 went to libc (sampled out, or no slot)',
    ),
    text,
  );
  fs.rmSync(run.dir, { recursive: true, force: true });
});
