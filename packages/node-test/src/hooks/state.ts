// Per-process plugin state, on globalThis so that a test file that loads the
// package through another path (a second copy) sees the same decision.
import type { GuardSettings } from '@mate-guard/core/internal';

import type { NodeTestRole } from './role';

export interface PluginState {
  role: NodeTestRole;
  settings: GuardSettings;
  /** The allocator is installed in this process and its tests are bracketed. */
  guarding: boolean;
}

const KEY = Symbol.for('mate-guard.node-test.state');
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
