// What loading the plugin does, once per process: decide this process's
// role and settings, install the allocator where tests run, and set up the
// end of the run in the main process. Runs before any spec file loads.
import { installForRunner, RunReportCollector, type RunnerGuardSettings } from '@mate-guard/core';

import { readHandoff, WATCHED_ENV, writeHandoff } from './handoff';
import { runsInWorkers } from './mocha-options';
import { finishRunAtExit } from './run-end';
import { resolveMochaConfig } from './settings';
import { getState, setState, type MochaRole, type PluginState } from './state';

// Mocha sets MOCHA_WORKER_ID in each --parallel worker's env and runs its
// worker script as the main module; a mocha that a test starts from inside
// a worker inherits the variable but is not a worker.
function isMochaWorker(): boolean {
  const main = process.argv[1] ?? '';
  return process.env.MOCHA_WORKER_ID !== undefined && /mocha[\\/]lib[\\/]nodejs[\\/]worker\.c?js$/.test(main);
}

function workerSettings(): RunnerGuardSettings | undefined {
  return isMochaWorker() ? readHandoff() : undefined;
}

function decide(): { role: MochaRole; settings: RunnerGuardSettings } {
  const handed = workerSettings();
  if (handed) return { role: 'worker', settings: handed };
  // The main process: its own argv (plain mocha: no `--guard-mode tail`).
  const { settings, mochaOptions } = resolveMochaConfig(process.argv.slice(2), false);
  return { role: runsInWorkers(mochaOptions) ? 'parallel-main' : 'serial', settings };
}

export function start(): PluginState {
  const existing = getState();
  if (existing) return existing;
  const { role, settings } = decide();
  const state: PluginState = { role, settings, guarding: false, hooksHandedOut: false };
  if (settings.enabled) {
    const watched = process.env[WATCHED_ENV] === '1';
    // The report dir must exist (and be in the env) before install and fork.
    const collector = role !== 'worker' && !watched ? new RunReportCollector('mocha') : undefined;
    if (role === 'parallel-main') writeHandoff(settings);
    else {
      installForRunner(settings);
      state.guarding = true;
    }
    // After install, so core's exit check and counters come first.
    if (collector) finishRunAtExit(collector);
  }
  setState(state);
  return state;
}
