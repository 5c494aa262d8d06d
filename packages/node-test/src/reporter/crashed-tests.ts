// A test file whose process a guard fault killed: node --test reports the
// file as failed ('test failed', signal SIGSEGV) and never hears of the
// test that was running, so no reporter (spec, tap, junit) names it. The
// dying process's event does: in the main process, once the file's process
// is gone, the crashed test is added to the file's results as a failed
// test whose error is the report, inside the suites it belongs to.
import * as path from 'node:path';
import { serialize } from 'node:v8';

import {
  crashFailure,
  crashInFile,
  readReportDir,
  reportText,
  workerCrash,
  type ViolationEvent,
} from '@mate-guard/core/internal';

import type { CallTest, NodeTest } from '../hooks/test-class';

/** An item of node:test's report stream (`test:start`, `test:fail`, ...). */
interface ReportItem {
  type: string;
  data: { name?: string; nesting?: number; [key: string]: unknown };
}

/** node --test's FileTest: one test file run in a child process. */
interface FileTest extends NodeTest {
  addToReport(item: ReportItem): void;
  /** Sends what the file's process reported (items held until the file may report). */
  drain(): void;
  /** Reports the file itself (node: unless its tests were reported and it failed only through them). */
  report(): void;
}

/**
 * The crashed tests now stand for the file's failure: node's own entry for
 * the file (`test failed`, the signal) would count the one bug twice, and
 * under the number of the file's first test, which TAP then carries twice.
 */
function reportOnlyItsTests(file: FileTest): void {
  file.report = function (this: FileTest) {
    this.drain();
  };
}

interface Open {
  name: string;
  nesting: number;
  /** Its tests reported so far (the plan when it is closed). */
  children: number;
}

/** Which suites of the file were reported started and not yet ended: the crash happened inside them. */
function trackOpen(file: FileTest, failed: Set<string>): Open[] {
  const open: Open[] = [];
  const add = file.addToReport.bind(file);
  file.addToReport = (item: ReportItem) => {
    const { name, nesting } = item.data;
    if (typeof name === 'string' && typeof nesting === 'number') {
      if (item.type === 'test:start') open.push({ name, nesting, children: 0 });
      else if (item.type === 'test:pass' || item.type === 'test:fail') {
        if (item.type === 'test:fail') failed.add(name);
        const at = open.findIndex((o) => o.nesting === nesting && o.name === name);
        if (at >= 0) open.splice(at);
        const parent = open.findLast((o) => o.nesting === nesting - 1);
        if (parent) parent.children++;
      }
    }
    add(item);
  };
  return open;
}

/**
 * An error as a test file's process sends it (node's error_serdes form:
 * a 0 byte, then the v8-serialized constructor name and own property
 * descriptors): the main process deserializes every error it is handed.
 */
function serializedError(err: Error): Buffer {
  const properties: Record<string, PropertyDescriptor> = {};
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(err))) {
    // Node >= 22 (V8 12): `stack` is an accessor, whose functions v8.serialize
    // refuses; node's own error_serdes stores what the getter returns.
    const value: unknown = d.get ? d.get.call(err) : d.value;
    properties[key] = { value, writable: d.writable ?? true, enumerable: d.enumerable ?? false, configurable: true };
  }
  properties.name = { value: err.name, writable: true, enumerable: false, configurable: true };
  const cause = properties.cause?.value as unknown;
  if (cause instanceof Error) properties.cause = { ...properties.cause, value: serializedError(cause) };
  return Buffer.concat([Buffer.from([0]), serialize({ constructor: 'Error', properties })]);
}

/** The error node's reporters print for a failed test: a test failure whose cause is the report. */
function failureError(message: string, name = 'GuardFaultError'): Buffer {
  const cause = new Error(message);
  cause.name = name;
  cause.stack = `${cause.name}: ${cause.message}`; // the report is the useful part
  const err = Object.assign(new Error(message), { code: 'ERR_TEST_FAILURE', failureType: 'testCodeFailure', cause });
  err.stack = cause.stack;
  return serializedError(err);
}

interface Emit {
  (type: string, name: string, nesting: number, details?: object): void;
  /** A suite's plan: how many tests it reported (TAP's `1..N` under it). */
  plan(nesting: number, count: number): void;
}

/** `open`: the suites open in the report, whose tests so far number the next one (node numbers the top level itself). */
function emitterOf(file: FileTest, rel: string, open: readonly Open[]): Emit {
  const loc = { file: file.loc?.file ?? path.resolve(rel), line: 1, column: 1 };
  const numberAt = (nesting: number) => (open.findLast((o) => o.nesting === nesting - 1)?.children ?? 0) + 1;
  const emit = (type: string, name: string, nesting: number, details?: object) =>
    file.addToReport({
      type,
      data: { ...loc, name, nesting, testNumber: numberAt(nesting), ...(details ? { details } : {}) },
    });
  return Object.assign(emit, {
    plan: (nesting: number, count: number) => file.addToReport({ type: 'test:plan', data: { ...loc, nesting, count } }),
  });
}

const SUITE_FAILED = () => ({
  duration_ms: 0,
  type: 'suite',
  error: failureError('a guard fault killed the test process'),
});

/** Ends a suite the dead process left open: its plan, then its failure. */
function closeSuite(emit: Emit, o: Open): void {
  if (o.children > 0) emit.plan(o.nesting + 1, o.children);
  emit('test:fail', o.name, o.nesting, SUITE_FAILED());
}

/**
 * Ends the open suites deeper than `depth`, innermost first, one at a
 * time: each stays open until its own failure goes out, so that failure
 * counts in its parent's plan (trackOpen then closes it). Taken off all at
 * once, a suite's failure found no parent: every enclosing suite's plan was
 * missing after a crash two suites deep.
 */
function closeDeeperThan(emit: Emit, open: Open[], depth: number): void {
  while (open.length > depth) {
    const o = open[open.length - 1];
    closeSuite(emit, o);
    if (open[open.length - 1] === o) open.pop(); // trackOpen did not see it: never loop
  }
}

/**
 * Reports the test at `where` (file > suites > test) failed with `message`,
 * inside its suites: those open in the report that are not its own are
 * closed, its own missing ones started (left open: closeOpen ends them).
 */
function emitFailure(emit: Emit, open: Open[], where: string, message: string, name?: string): void {
  const titles = where.split(' > ').slice(1);
  let shared = 0;
  while (shared < open.length && shared < titles.length - 1 && open[shared].name === titles[shared]) shared++;
  closeDeeperThan(emit, open, shared);
  for (let i = shared; i < titles.length - 1; i++) emit('test:start', titles[i], i); // trackOpen records it open
  const nesting = titles.length - 1;
  emit('test:start', titles[nesting], nesting);
  emit('test:fail', titles[nesting], nesting, { duration_ms: 0, error: failureError(message, name) });
}

/** Ends the suites the dead process left open, innermost first. */
function closeOpen(emit: Emit, open: Open[]): void {
  closeDeeperThan(emit, open, 0);
}

function emitCrash(emit: Emit, open: Open[], e: ViolationEvent, rel: string, label: string): void {
  const { test, message, name } = crashFailure(e, label, rel, 'process');
  emitFailure(emit, open, test, message, name);
}

/** A report the dead process handed to a test that node never heard of (its results died with it). */
function emitEarlier(emit: Emit, open: Open[], e: ViolationEvent, label: string): void {
  if (!e.test) return;
  emitFailure(
    emit,
    open,
    e.test,
    `${reportText(e)}(this test failed with it before a guard fault killed ${label} ${e.pid}, which took its result with it)`,
  );
}

/**
 * Around a file's run in node --test's main process: when its process has
 * ended, the tests that a guard fault killed (per the run's report
 * directory, each event once) are reported failed before the file is.
 */
export function crashedTestsOfFile(reportDir: string, announced: Set<string>, label: string) {
  return (test: NodeTest, call: CallTest, args: unknown[]): unknown => {
    const file = test as FileTest;
    const failed = new Set<string>(); // names of tests node reported failed
    const open = trackOpen(file, failed);
    const rel = path.relative(process.cwd(), file.loc?.file ?? file.name) || file.name;
    const emit = emitterOf(file, rel, open);
    const announce = () => {
      const { violations } = readReportDir(reportDir);
      let crashed = false;
      for (const e of violations) {
        if (!workerCrash(e) || !e.file || announced.has(e.file)) continue;
        if (!crashInFile(e, rel)) continue;
        announced.add(e.file);
        // What the process reported to its tests before it died, where node never got the result.
        for (const v of violations) {
          if (v.pid !== e.pid || v.fatal || v.delivered !== 'caller' || !v.file || announced.has(v.file)) continue;
          announced.add(v.file);
          if (v.test && !failed.has(v.test.split(' > ').pop() ?? '')) emitEarlier(emit, open, v, label);
        }
        emitCrash(emit, open, e, rel, label);
        closeOpen(emit, open);
        crashed = true;
      }
      if (crashed) reportOnlyItsTests(file);
    };
    return Promise.resolve(call(args)).then(
      (v) => (announce(), v),
      (err: unknown) => {
        announce();
        throw err;
      },
    );
  };
}
