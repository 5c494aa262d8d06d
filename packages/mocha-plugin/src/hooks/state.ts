// Per-process plugin state, kept on globalThis so that a spec file that
// loads the package through another path (a second copy) sees the same.
import type { GuardSettings } from '@mate-guard/core/internal';

/** Which Mocha process this is, as far as guarding is concerned. */
export type MochaRole =
  | 'serial'         // the main process runs the tests itself
  | 'parallel-main'  // the main process of --parallel: workers run the tests
  | 'worker';        // a --parallel worker

export interface PluginState {
  role: MochaRole;
  settings: GuardSettings;
  /** The allocator is installed in this process and tests are bracketed. */
  guarding: boolean;
  /** Root hooks were given to Mocha (once, even if two copies are required). */
  hooksHandedOut: boolean;
}

const KEY = Symbol.for('mate-guard.mocha.state');
type Holder = { [KEY]?: PluginState };

export function getState(): PluginState | undefined {
  return (globalThis as Holder)[KEY];
}

export function setState(state: PluginState): void {
  (globalThis as Holder)[KEY] = state;
}

/** True when tests in this process run under the guard allocator. */
export function guardingHere(): boolean {
  return getState()?.guarding ?? false;
}
