// test('name', guardIncompatible(), fn) / describe('name', graphCapture({ timeout: 500 }), fn):
// core's tag policy as node:test options. While guarding is on, the options
// carry node's own `skip` with the reason, which every node reporter shows
// (spec: `# <reason>`, TAP: `# SKIP <reason>`, JUnit: <skipped message>).
import { GRAPH_CAPTURE_TAG, GUARD_INCOMPATIBLE_TAG, guardSkipReason, type GuardTag } from '@mate-guard/core/internal';

import { guardingHere } from './state';

/** The options node:test takes that matter here; every other key passes through. */
export interface TestOptions {
  skip?: boolean | string;
  [key: string]: unknown;
}

function tag<T extends TestOptions>(name: GuardTag, fn: string, options?: T): T {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError(
      `${fn}() takes node:test's options object, e.g. test('name', ${fn}({ timeout: 500 }), fn); got ${options === null ? 'null' : typeof options}`,
    );
  }
  // Test files load after the plugin decided, so the decision is final here.
  const reason = guardSkipReason([name], guardingHere());
  const out = { ...(options ?? {}) } as T;
  if (reason && !out.skip) out.skip = reason;
  return out;
}

/** Options that skip the test or suite while guarding is on (tagged guard_incompatible). */
export function guardIncompatible<T extends TestOptions>(options?: T): T {
  return tag(GUARD_INCOMPATIBLE_TAG, 'guardIncompatible', options);
}

/** Options that skip the test or suite while guarding is on (tagged graph-capture: CUDA graph capture is refused). */
export function graphCapture<T extends TestOptions>(options?: T): T {
  return tag(GRAPH_CAPTURE_TAG, 'graphCapture', options);
}
