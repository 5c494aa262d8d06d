// The per-test bracket: name the test in reports, check canaries after the
// test body so that damage fails the test that did it, and once more after
// its afterEach hooks.
import * as path from 'node:path';

import {
  beginGuardedTest,
  checkGuardedTest,
  endGuardedTest,
  flushGuardStats,
  formatTestPath,
  guardAllocatorConfig,
  isGuardAllocatorActive,
  markReportsShown,
  outsideTestsError,
  takeOutsideDamage,
  violationError,
  type GuardViolation,
  type ViolationEvent,
} from '@mate-guard/core/internal';

import type { MochaContext, MochaTest, RootHooks, TestFn } from './mocha-types';
import { getState } from './state';

const wrapped = new WeakSet<TestFn>();

/** Reports this process failed tests (or the file) with since its last file ended. */
const delivered: ViolationEvent[] = [];

// formatTestPath makes absolute files relative (path.relative per call);
// a file's relative path is worked out once.
const relativeFiles = new Map<string, string>();
function relativeFile(file: string | undefined): string | undefined {
  if (!file || !path.isAbsolute(file)) return file;
  let rel = relativeFiles.get(file);
  if (rel === undefined) {
    rel = path.relative(process.cwd(), file) || file;
    relativeFiles.set(file, rel);
  }
  return rel;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The violation error, also naming the test's own error when it failed too.
 * No stack: the report is the message, and Mocha would print a copy of it
 * (its stack filter rewrites the report's stack lines, so the two differ).
 */
function failure(found: GuardViolation[], note?: string): Error {
  delivered.push(...found.map((v) => v.event));
  const err = violationError(found);
  if (note) err.message += `\n(${note})`;
  err.stack = '';
  return err;
}

function ownError(own: unknown): string | undefined {
  if (own === undefined) return undefined;
  return `the test also failed: ${own instanceof Error ? `${own.name}: ${own.message}` : String(own)}`;
}

function checkAfterBody(own?: unknown): void {
  const found = checkGuardedTest();
  if (found.length) throw failure(found, ownError(own));
  if (own !== undefined) throw own;
}

/**
 * Wraps the test body so the canary check runs inside the test: a throw
 * there fails the test itself, while a throw from an afterEach hook would
 * make Mocha skip the rest of the suite. Keeps the arity: Mocha picks
 * callback style from fn.length at construction.
 */
function wrapBody(test: MochaTest): void {
  const fn = test.fn;
  if (!fn || wrapped.has(fn)) return;
  const body: TestFn =
    fn.length > 0
      ? function (this: MochaContext, done?: (err?: unknown) => void) {
          return fn.call(this, (err?: unknown) => {
            try {
              checkAfterBody(err ?? undefined);
              done?.();
            } catch (e) {
              done?.(e);
            }
          });
        }
      : function (this: MochaContext) {
          let result: unknown;
          try {
            result = fn.call(this);
          } catch (e) {
            checkAfterBody(e);
          }
          if (isThenable(result)) {
            return Promise.resolve(result).then(
              (v) => (checkAfterBody(), v),
              (e: unknown) => checkAfterBody(e),
            );
          }
          checkAfterBody();
          return result;
        };
  wrapped.add(body);
  test.fn = body;
}

function beforeEachTest(this: MochaContext): void {
  const test = this.currentTest;
  if (!test || !isGuardAllocatorActive()) return;
  // Damage found now was done outside any test: core keeps it for the end
  // (a throw here would make Mocha skip the rest of the suite).
  beginGuardedTest(formatTestPath(relativeFile(test.file), test.titlePath()));
  wrapBody(test);
}

function afterEachTest(this: MochaContext): void {
  const found = endGuardedTest();
  if (found.length) throw failure(found);
}

/**
 * The end of the root suite (each file in a --parallel worker, the whole run
 * in serial mode): damage done outside any test fails here, after every
 * test ran. Workers may be ended without 'exit' handlers: counters are left
 * now.
 */
function afterAllTests(): void {
  flushGuardStats();
  const found = takeOutsideDamage({ all: true });
  delivered.push(...found.map((v) => v.event));
  const worker = getState()?.role === 'worker';
  // A --parallel worker hands the file's results to mocha now, these reports
  // with them: a guard fault in its next file takes them no more. (Serial
  // mocha shows failures when the whole run ends.)
  const dir = guardAllocatorConfig()?.reportDir;
  if (worker && dir) markReportsShown(dir, delivered.splice(0));
  if (!found.length) return;
  const err = outsideTestsError(found, worker ? 'this file' : 'this run');
  err.stack = '';
  throw err;
}

// Mocha names hooks by their function name in failures.
function named<F extends (...args: never[]) => unknown>(fn: F, name: string): F {
  Object.defineProperty(fn, 'name', { value: name });
  return fn;
}
named(beforeEachTest, 'mate-guard canary check');
named(afterEachTest, 'mate-guard canary check');
named(afterAllTests, 'mate-guard damage outside tests');

/** The root hooks. */
export function rootHooks(): RootHooks {
  return { beforeEach: [beforeEachTest], afterEach: [afterEachTest], afterAll: [afterAllTests] };
}
