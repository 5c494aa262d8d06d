// Per-process plugin state (core's processState: one per process, whichever
// copy of the package a spec file loads).
import { processState, type GuardSettings } from '@mate-guard/core/internal';

/** Which Mocha process this is, as far as guarding is concerned. */
export type MochaRole =
  | 'serial' // the main process runs the tests itself
  | 'parallel-main' // the main process of --parallel: workers run the tests
  | 'worker'; // a --parallel worker

export interface PluginState {
  role: MochaRole;
  settings: GuardSettings;
  /** The allocator is installed in this process and tests are bracketed. */
  guarding: boolean;
  /** Root hooks were given to Mocha (once, even if two copies are required). */
  hooksHandedOut: boolean;
}

const state = processState<PluginState>('mate-guard.mocha.state');
export const getState = state.get;
export const setState = state.set;

/** True when tests in this process run under the guard allocator. */
export function guardingHere(): boolean {
  return getState()?.guarding ?? false;
}
