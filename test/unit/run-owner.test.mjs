// The one run owner and the one verdict, in-process: which process owns a
// run (from the handoff alone), and the exit code every end of a run uses
// (a runner's process, a launcher, `mate report` after the fact).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const core = path.join(ROOT, 'packages/core-native/dist');
const { GuardedRun } = await import(path.join(core, 'run/lifecycle.js'));
const { runOwnership, runsAlone } = await import(path.join(core, 'run/owner.js'));
const { runExitCode, verdictOf } = await import(path.join(core, 'run/verdict.js'));
const { HANDOFF_ENV } = await import(path.join(core, 'settings/handoff.js'));
const { defaultSettings } = await import(path.join(core, 'settings/table.js'));
const event = (name, extra = {}) => ({
  ...JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events', `${name}.json`), 'utf8')),
  ...extra,
});

const settings = { ...defaultSettings({}), enabled: true };
const handoffEnv = (ownerPid) => ({
  [HANDOFF_ENV]: JSON.stringify({
    version: 1,
    settings,
    explicit: ['enabled'],
    ...(ownerPid === undefined ? {} : { ownerPid }),
  }),
});

test('no run started: a process that may start one owns it; any other runs alone', () => {
  assert.deepEqual(runOwnership(true, {}), { owns: true, elsewhere: false, handed: undefined });
  assert.deepEqual(runOwnership(false, {}), { owns: false, elsewhere: false, handed: undefined });
  assert.equal(runsAlone({}), true);
});

test('the process the handoff names owns the run, whatever it may start; its own handoff is not handed to it', () => {
  const env = {};
  const run = GuardedRun.start({ runner: 'unit', settings, env });
  try {
    for (const mayStart of [true, false])
      assert.deepEqual(runOwnership(mayStart, env), { owns: true, elsewhere: false, handed: undefined });
    assert.equal(runsAlone(env), false);
  } finally {
    fs.rmSync(run.dir, { recursive: true, force: true });
  }
});

test('another process named in the handoff owns it: this one uses the settings it handed over', () => {
  for (const mayStart of [true, false]) {
    const o = runOwnership(mayStart, handoffEnv(process.pid + 1));
    assert.equal(o.owns, false);
    assert.equal(o.elsewhere, true);
    assert.equal(o.handed.settings.enabled, true);
  }
  assert.equal(runsAlone(handoffEnv(process.pid + 1)), false);
});

test("a launcher that left the run to its runner (watch mode): the runner's main process owns it with the handed settings", () => {
  const env = {};
  GuardedRun.leaveTo(env, settings, ['enabled']);
  const main = runOwnership(true, env);
  assert.equal(main.owns, true);
  assert.equal(main.elsewhere, false);
  assert.deepEqual(main.handed.explicit, ['enabled']);
  assert.equal(runOwnership(false, env).owns, false, 'a worker does not take it');
  assert.equal(runsAlone(env), true, 'until the main process starts it');
});

test('a broken handoff is a configuration error, not a guess', () => {
  assert.throws(() => runOwnership(true, { [HANDOFF_ENV]: 'not json' }), { name: 'GuardConfigError' });
});

test("one exit-code rule: a runner's result covers the violations it failed tests with; mate report has none, so each one fails", () => {
  const handed = event('underflow', { delivered: 'caller' });
  assert.equal(runExitCode(0, [handed]), 0);
  assert.equal(runExitCode(undefined, [handed]), 1);
  assert.equal(runExitCode(undefined, [{ ...handed, suppressed: { rule: 'x' } }]), 0);
  assert.equal(runExitCode(undefined, []), 0);
  const report = (violations, unreadable = []) => ({ dir: '/nonexistent', violations, processes: [], unreadable });
  const passed = verdictOf([report([event('underflow', { delivered: 'stderr' })])], 0);
  assert.equal(passed.exitCode, 1);
  assert.equal(passed.failsPassedRun, true, 'the runner passed: its adapter must fail the run');
  assert.equal(passed.guarded, true);
  const failed = verdictOf([report([event('underflow', { delivered: 'stderr' })])], 1);
  assert.equal(failed.failsPassedRun, false, 'the runner failed the run itself');
  const merged = verdictOf([report([handed]), report([event('overflow', { pid: 9 })])], undefined);
  assert.equal(merged.summary.violations, 2);
  assert.equal(merged.summary.died, 1);
  assert.equal(merged.guarded, true);
  assert.equal(verdictOf([report([])], 0).guarded, false);
  // A report file no one could read may hold anything: a violation; a counters file that could not be read is not.
  const cut = verdictOf([report([], [{ file: '/r/mate-guard-1-1.json', holds: 'report', why: 'cut short' }])], 0);
  assert.deepEqual([cut.exitCode, cut.failsPassedRun, cut.summary.violations, cut.summary.unreadable], [1, true, 1, 1]);
  assert.equal(
    verdictOf([report([], [{ file: '/r/stats-1-0.json', holds: 'counters', why: 'cut short' }])], 0).exitCode,
    0,
  );
});
