// guardIncompatible(it(...)) / graphCapture(describe(...)): core's tag
// policy applied to Mocha's Test and Suite objects. While guarding is on,
// a tagged test is pending, with the reason appended to its title (the one
// thing every reporter shows for a pending test).
import {
  GRAPH_CAPTURE_TAG,
  GUARD_INCOMPATIBLE_TAG,
  guardSkipReason,
  noteTagSkip,
  type GuardTag,
} from '@mate-guard/core/internal';

import { isMochaSuite, isMochaTest, type MochaSuite, type MochaTest } from './mocha-types';
import { guardingHere } from './state';

const SKIPPED = Symbol.for('mate-guard.mocha.skipped');
type Tagged = { [SKIPPED]?: boolean };

function skipTest(test: MochaTest, reason: string): void {
  const t = test as MochaTest & Tagged;
  if (t[SKIPPED]) return;
  t[SKIPPED] = true;
  test.pending = true;
  test.title = `${test.title} (skipped by mate-guard: ${reason})`;
  noteTagSkip();
}

function skipSuite(suite: MochaSuite, reason: string): void {
  suite.pending = true; // its hooks don't run either
  for (const test of suite.tests) skipTest(test, reason);
  for (const child of suite.suites) skipSuite(child, reason);
}

function tag<T>(name: GuardTag, fn: string, target: T): T {
  if (!isMochaTest(target) && !isMochaSuite(target)) {
    throw new TypeError(
      `${fn}() takes the value of it(...) or describe(...), e.g. ${fn}(it('name', fn)); got ${target === null ? 'null' : typeof target}`,
    );
  }
  // Spec files load after the plugin decided, so the decision is final here.
  const reason = guardSkipReason([name], guardingHere());
  if (reason) {
    if (isMochaTest(target)) skipTest(target, reason);
    else skipSuite(target, reason);
  }
  return target;
}

/** Tags a test or suite `guard_incompatible`: pending while guarding is on. */
export function guardIncompatible<T>(target: T): T {
  return tag(GUARD_INCOMPATIBLE_TAG, 'guardIncompatible', target);
}

/** Tags a test or suite `graph-capture`: pending while guarding is on. */
export function graphCapture<T>(target: T): T {
  return tag(GRAPH_CAPTURE_TAG, 'graphCapture', target);
}
