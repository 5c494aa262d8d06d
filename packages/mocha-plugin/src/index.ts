// @mate-guard/mocha: a Mocha root-hook plugin. `mocha --require
// @mate-guard/mocha --guard-alloc` (or `require:` in .mocharc) backs the
// tests' buffers with guard pages, in serial mode and in every --parallel
// worker. Loading it makes guarding available; a flag, MATE_MOCHA_GUARD_*
// or an rc key turns it on.
import { GuardConfigError } from '@mate-guard/core';

import { rootHooks } from './bracket';
import type { RootHooks } from './mocha-types';
import { start } from './start';
import { getState } from './state';

function startOrExplain(): void {
  try {
    start();
  } catch (err) {
    // Mocha prints the error and exits 1 before any test: keep just the message.
    if (err instanceof GuardConfigError) err.stack = `${err.name}: mate-guard: ${err.message}`;
    throw err;
  }
}
startOrExplain();

let handedOut = false;

/** Root hooks; Mocha calls this once per process (again only if the plugin is required twice). */
export function mochaHooks(): RootHooks {
  if (handedOut || !getState()?.guarding) return {};
  handedOut = true;
  return rootHooks();
}

/** Whether tests in this process run under the guard allocator. */
export function isGuarding(): boolean {
  return getState()?.guarding ?? false;
}

export { guardIncompatible, graphCapture, tagsOf } from './tags';
export type { MochaRole, PluginState } from './state';
export type { MochaSuite, MochaTest, MochaContext, RootHooks, TestFn } from './mocha-types';
