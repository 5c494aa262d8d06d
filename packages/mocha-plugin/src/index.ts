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
    if (!(err instanceof GuardConfigError)) throw err;
    // A bad flag, variable or rc value: stop before any spec file loads,
    // with one line (Mocha would print an inspected error object).
    process.stderr.write(`mate-guard: ${err.message}\n`);
    process.exit(1);
  }
}
startOrExplain();

/** Root hooks; Mocha calls this once per process (again only if the plugin is required twice). */
export function mochaHooks(): RootHooks {
  const state = getState();
  if (!state?.guarding || state.hooksHandedOut) return {};
  state.hooksHandedOut = true;
  return rootHooks();
}

/** Whether tests in this process run under the guard allocator. */
export function isGuarding(): boolean {
  return getState()?.guarding ?? false;
}

export { guardIncompatible, graphCapture, tagsOf } from './tags';
export type { MochaRole, PluginState } from './state';
export type { MochaSuite, MochaTest, MochaContext, RootHooks, TestFn } from './mocha-types';
