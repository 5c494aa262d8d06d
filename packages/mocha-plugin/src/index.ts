// @mate-guard/mocha: a Mocha root-hook plugin. `mocha --require
// @mate-guard/mocha --guard-alloc` (or `require:` in .mocharc) backs the
// tests' buffers with guard pages, in serial mode and in every --parallel
// worker. Loading it makes guarding available; a flag, MATE_MOCHA_GUARD_*
// or an rc key turns it on.
import { orExitOnConfigError } from '@mate-guard/core/internal';

import { rootHooks } from './hooks/bracket';
import type { RootHooks } from './hooks/mocha-types';
import { start } from './hooks/start';
import { getState } from './hooks/state';

// A bad flag, variable or rc value: stop before any spec file loads,
// with one line (Mocha would print an inspected error object).
orExitOnConfigError('mate-guard', start);

/** Root hooks; Mocha calls this once per process (again only if the plugin is required twice). */
export function mochaHooks(): RootHooks {
  const state = getState();
  if (!state?.guarding || state.hooksHandedOut) return {};
  state.hooksHandedOut = true;
  return rootHooks();
}

export { guardIncompatible, graphCapture } from './hooks/tags';
