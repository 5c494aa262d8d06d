// Per-process plugin state (core's processState: one per process, whichever
// copy of the package a test file loads).
import { processState, type GuardSettings } from '@mate-guard/core/internal';

import type { NodeTestRole } from './role';

export interface PluginState {
  role: NodeTestRole;
  settings: GuardSettings;
  /** The allocator is installed in this process and its tests are bracketed. */
  guarding: boolean;
}

const state = processState<PluginState>('mate-guard.node-test.state');
export const getState = state.get;
export const setState = state.set;

/** True when tests in this process run under the guard allocator. */
export function guardingHere(): boolean {
  return getState()?.guarding ?? false;
}
