// A test file whose process a guard fault killed: node --test reports the
// file as failed ('test failed', signal SIGSEGV) and never hears of the
// test that was running, so no reporter (spec, tap, junit) names it. The
// dying process's event does: in the main process, once the file's process
// is gone, the crashed test is added to the file's results as a failed
// test whose error is the report, inside the suites it belongs to.
import * as path from 'node:path';
import { serialize } from 'node:v8';

import { formatCrashAttribution, readReportDir, reportText, type ViolationEvent } from '@mate-guard/core/internal';

import type { CallTest, NodeTest } from '../hooks/test-class';

/** An item of node:test's report stream (`test:start`, `test:fail`, ...). */
interface ReportItem {
  type: string;
  data: { name?: string; nesting?: number; [key: string]: unknown };
}

/** node --test's FileTest: one test file run in a child process. */
interface FileTest extends NodeTest {
  addToReport(item: ReportItem): void;
}

interface Open {
  name: string;
  nesting: number;
}

/** Which suites of the file were reported started and not yet ended: the crash happened inside them. */
function trackOpen(file: FileTest): Open[] {
  const open: Open[] = [];
  const add = file.addToReport.bind(file);
  file.addToReport = (item: ReportItem) => {
    const { name, nesting } = item.data;
    if (typeof name === 'string' && typeof nesting === 'number') {
      if (item.type === 'test:start') open.push({ name, nesting });
      else if (item.type === 'test:pass' || item.type === 'test:fail') {
        const at = open.findIndex((o) => o.nesting === nesting && o.name === name);
        if (at >= 0) open.splice(at);
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
  const properties: Record<string, PropertyDescriptor> = Object.getOwnPropertyDescriptors(err);
  properties.name = { value: err.name, writable: true, enumerable: false, configurable: true };
  const cause = properties.cause?.value as unknown;
  if (cause instanceof Error) properties.cause = { ...properties.cause, value: serializedError(cause) };
  return Buffer.concat([Buffer.from([0]), serialize({ constructor: 'Error', properties })]);
}

/** The error node's reporters print for a failed test: a test failure whose cause is the report. */
function failureError(message: string): Buffer {
  const cause = new Error(message);
  cause.name = 'GuardFaultError';
  cause.stack = `${cause.name}: ${cause.message}`; // the report is the useful part
  const err = Object.assign(new Error(message), { code: 'ERR_TEST_FAILURE', failureType: 'testCodeFailure', cause });
  err.stack = cause.stack;
  return serializedError(err);
}

function emitCrash(file: FileTest, open: Open[], e: ViolationEvent, rel: string, label: string): void {
  const where = e.test ?? e.allocation?.allocTest ?? `${rel} > [mate-guard] guard fault outside any test`;
  const titles = where.split(' > ').slice(1);
  const loc = { file: file.loc?.file ?? path.resolve(rel), line: 1, column: 1 };
  const emit = (type: string, name: string, nesting: number, details?: object) =>
    file.addToReport({ type, data: { ...loc, name, nesting, testNumber: 1, ...(details ? { details } : {}) } });
  // Suites already open in the report that are not the crashed test's: closed first.
  let shared = 0;
  while (shared < open.length && shared < titles.length - 1 && open[shared].name === titles[shared]) shared++;
  for (const o of open.splice(shared).reverse()) emit('test:fail', o.name, o.nesting, { duration_ms: 0, type: 'suite', error: failureError('a guard fault killed the test process') });
  for (let i = shared; i < titles.length - 1; i++) emit('test:start', titles[i], i);
  const nesting = titles.length - 1;
  const message = `${reportText(e)}${formatCrashAttribution(e, label).trimEnd()}\nThe process died, so the rest of ${rel} did not run.`;
  emit('test:start', titles[nesting], nesting);
  emit('test:fail', titles[nesting], nesting, { duration_ms: 0, error: failureError(message) });
  for (let i = nesting - 1; i >= 0; i--) {
    emit('test:fail', titles[i], i, { duration_ms: 0, type: 'suite', error: failureError(`${titles[nesting]} was killed by a guard fault`) });
  }
  open.length = 0;
}

/**
 * Around a file's run in node --test's main process: when its process has
 * ended, the tests that a guard fault killed (per the run's report
 * directory, each event once) are reported failed before the file is.
 */
export function crashedTestsOfFile(reportDir: string, announced: Set<string>, label: string) {
  return (test: NodeTest, call: CallTest, args: unknown[]): unknown => {
    const file = test as FileTest;
    const open = trackOpen(file);
    const rel = path.relative(process.cwd(), file.loc?.file ?? file.name) || file.name;
    const inFile = (t: string | null | undefined) => t != null && (t === rel || t.startsWith(`${rel} > `));
    const announce = () => {
      for (const e of readReportDir(reportDir).violations) {
        if (!e.fatal || !e.file || announced.has(e.file)) continue;
        if (!inFile(e.test) && !(e.test === null && inFile(e.allocation?.allocTest))) continue;
        announced.add(e.file);
        emitCrash(file, open, e, rel, label);
      }
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
