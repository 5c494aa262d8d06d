// The per-test bracket in a process that runs tests: name the test in
// reports (file > suite > test), and check canaries when its function
// returns (or its promise settles, or it calls done), so that damage fails
// the test that did it, with the report as the error node's reporters show.
import * as path from 'node:path';

import {
  beginGuardedTest,
  checkGuardedTest,
  endGuardedTest,
  formatTestPath,
  GUARD_SKIP_REASONS,
  noteTagSkip,
  violationError,
  type GuardViolation,
} from '@mate-guard/core/internal';

import { nodeTestRole, ownFile } from './role';
import { kindOf, type CallTest, type NodeTest } from './test-class';

const OUR_REASONS = new Set<string>(Object.values(GUARD_SKIP_REASONS));

/** The test's titles below the file (suites first), as node's own fullName has them. */
function titles(test: NodeTest): string[] {
  const out: string[] = [];
  for (let t: NodeTest | null = test; t && t.parent; t = t.parent) out.unshift(t.name);
  return out;
}

// A test file's own process names its tests by that file, also those a
// shared helper module defined (as Mocha, Jest and Vitest name them); tests
// of several files in one process, by where each was defined.
const ONE_FILE = nodeTestRole() === 'child';

function fileOf(test: NodeTest): string | undefined {
  const file = (ONE_FILE ? ownFile() : undefined) ?? test.loc?.file ?? ownFile();
  if (!file) return undefined;
  const local = file.startsWith('file://') ? new URL(file).pathname : file;
  return path.isAbsolute(local) ? path.relative(process.cwd(), local) || local : local;
}

// Tests nest (t.test inside a test body): the innermost running one is
// named in reports; its parent's damage found when it starts stays the parent's.
interface Frame {
  name: string;
  found: GuardViolation[];
}
const running: Frame[] = [];

function begin(name: string): Frame {
  const outer = running[running.length - 1];
  if (outer) outer.found.push(...checkGuardedTest());
  beginGuardedTest(name);
  const frame = { name, found: [] };
  running.push(frame);
  return frame;
}

function end(frame: Frame): GuardViolation[] {
  const found = [...frame.found, ...endGuardedTest()];
  const at = running.lastIndexOf(frame);
  if (at >= 0) running.splice(at, 1);
  const outer = running[running.length - 1];
  if (outer) beginGuardedTest(outer.name); // back to naming the parent
  return found;
}

/** The violation error (no stack: the report is the message), naming the test's own error when it failed too. */
function failure(found: GuardViolation[], own: unknown, threw: boolean): Error {
  const err = violationError(found);
  if (threw)
    err.message += `\n(the test also failed: ${own instanceof Error ? `${own.name}: ${own.message}` : String(own)})`;
  err.stack = `${err.name}: ${err.message}`;
  return err;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function bracket(test: NodeTest, call: CallTest, args: unknown[]): unknown {
  const frame = begin(formatTestPath(fileOf(test), titles(test)));
  const finish = (own: unknown, threw: boolean): void => {
    const found = end(frame);
    if (found.length) throw failure(found, own, threw);
    if (threw) throw own;
  };
  // Callback style: node passed `done` last; the check runs before it.
  const done = args.length >= 2 ? args[args.length - 1] : undefined;
  if (typeof done === 'function') {
    const checked = (err?: unknown) => {
      try {
        finish(err, err !== undefined && err !== null);
      } catch (e) {
        return (done as (e?: unknown) => void)(e);
      }
      return (done as () => void)();
    };
    try {
      return call([...args.slice(0, -1), checked]);
    } catch (e) {
      return finish(e, true); // throws
    }
  }
  let result: unknown;
  try {
    result = call(args);
  } catch (e) {
    finish(e, true);
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(
      (v) => (finish(undefined, false), v),
      (e: unknown) => finish(e, true),
    );
  }
  finish(undefined, false);
  return result;
}

/** What the plugin does around each call of a test function in a process that runs tests. */
export function aroundTest(test: NodeTest, call: CallTest, args: unknown[]): unknown {
  const kind = kindOf(test);
  if (kind !== 'test' && kind !== 'suite') return call(args);
  // A tag skip (node's own skip, with our reason): counted for the summary.
  if (test.skipped) {
    if (test.message !== null && OUR_REASONS.has(test.message)) noteTagSkip();
    return call(args);
  }
  return kind === 'test' ? bracket(test, call, args) : call(args);
}
