// What loading the plugin does, once per process: decide this process's
// role and settings, install the allocator where tests run, and own the run
// in the main process unless mate-mocha (or guard-run) does. Runs before
// any spec file loads.
import {
  GuardedRun,
  installFromSettings,
  parseFlags,
  RUNNER_FLAGS,
  runOwnership,
  type GuardSettings,
  type RunnerResolution,
} from '@mate-guard/core/internal';

import { reportCrashedTests } from '../reporter/crashed-tests';
import { endEachRun, endRunAtExit } from '../reporter/run-end';
import { onEveryRun } from '../reporter/runner-hook';
import { loadMochaOptions, runsInWorkers } from './mocha-options';
import { checkMochaVersion } from './mocha-version';
import { mainIsMochaFile, userMochaArgv } from './running-mocha';
import { resolveMochaConfig } from './settings';
import { getState, setState, type MochaRole, type PluginState } from './state';

// Mocha sets MOCHA_WORKER_ID in each --parallel worker's env and runs its
// worker script as the main module; a mocha that a test starts from inside
// a worker inherits the variable but is not a worker.
function isMochaWorker(): boolean {
  return (
    process.env.MOCHA_WORKER_ID !== undefined && mainIsMochaFile(['lib/nodejs/worker.js', 'lib/nodejs/worker.cjs'])
  );
}

interface Decision {
  role: MochaRole;
  settings: GuardSettings;
  /** This process owns the run: it makes the report directory and prints the summary. */
  owner: boolean;
  /** Watch mode: a summary at the end of every rerun. */
  watch: boolean;
  explicit?: RunnerResolution['explicit'];
}

function decide(): Decision {
  const worker = isMochaWorker();
  // mocha's main process owns the run unless mate-mocha (not watching) or mate guard-run does.
  const { owns, handed: handoff } = runOwnership(!worker);
  if (worker) {
    if (!handoff)
      throw new Error("mate-guard: a mocha worker without the main process's settings (MATE_GUARD_SETTINGS)");
    return { role: 'worker', settings: handoff.settings, owner: false, watch: false };
  }
  const { argv, rewritten } = userMochaArgv();
  if (handoff) {
    // mate-mocha (or mate guard-run) resolved the settings; guard words left here are not read.
    const mochaOptions = loadMochaOptions(parseFlags(argv, { ...RUNNER_FLAGS, spaceValues: true }).rest);
    return {
      role: runsInWorkers(mochaOptions) ? 'parallel-main' : 'serial',
      settings: handoff.settings,
      explicit: handoff.explicit,
      owner: owns,
      watch: mochaOptions.watch === true,
    };
  }
  // Plain mocha: its own argv (no `--guard-mode tail`, unless Mocha wrote it so), env and rc.
  const { settings, explicit, mochaOptions } = resolveMochaConfig(argv, rewritten);
  return {
    role: runsInWorkers(mochaOptions) ? 'parallel-main' : 'serial',
    settings,
    explicit,
    owner: owns,
    watch: mochaOptions.watch === true,
  };
}

export function start(): PluginState {
  const existing = getState();
  if (existing) return existing;
  const { role, settings, explicit, owner, watch } = decide();
  const state: PluginState = { role, settings, guarding: false, hooksHandedOut: false };
  if (settings.enabled) {
    // Once, where the run starts (a worker's Mocha is its main process's): a Mocha outside the range is refused, never half guarded.
    if (role !== 'worker') checkMochaVersion();
    // Before install and before any fork: workers inherit the handoff.
    const run = owner ? GuardedRun.start({ runner: 'mocha', settings, explicit }) : undefined;
    if (role !== 'parallel-main') {
      installFromSettings(run?.settings ?? settings);
      state.guarding = true;
    }
    const reportDir = run?.dir ?? settings.reportDir;
    const announced = new Set<string>();
    onEveryRun((runner, Mocha) => {
      if (role === 'parallel-main' && reportDir) reportCrashedTests(runner, Mocha, reportDir, announced);
      if (run && watch) endEachRun(runner, run);
    });
    // After install, so core's exit check and counters come first.
    if (run && !watch) endRunAtExit(run);
  }
  setState(state);
  return state;
}
