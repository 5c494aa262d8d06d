// A test file whose worker a guard fault killed: Jest records the file as
// "failed to run" with no tests in it, so reporters that list tests (the
// JUnit ones, --json) lose the test that crashed. The dying process's event
// names it: it is put back as a failed test whose message is the report.
import * as path from 'node:path';

import { crashFailure, crashInFile, earlierReports, reportText, type ViolationEvent } from '@mate-guard/core/internal';
import type { AggregatedResult, AssertionResult, TestResult } from '@jest/test-result';

import { testFilePrefix } from '../environment/project';

/** The fatal events of one test file (core's attribution, by the file and project in the report's test path). */
function eventsOf(
  testResult: TestResult,
  fatal: readonly ViolationEvent[],
  project: string | undefined,
): ViolationEvent[] {
  const file = testFilePrefix(testResult.testFilePath, project);
  return fatal.filter((e) => crashInFile(e, file));
}

function failedTest(titles: string[], title: string, message: string): AssertionResult {
  return {
    ancestorTitles: titles,
    duration: 0,
    failureDetails: [],
    failureMessages: [message],
    fullName: [...titles, title].join(' '),
    invocations: 1,
    location: null,
    numPassingAsserts: 0,
    retryReasons: [],
    status: 'failed',
    title,
  };
}

function crashedTest(e: ViolationEvent, rel: string, label: string): AssertionResult {
  const { suites: titles, title, message } = crashFailure(e, label, rel);
  return failedTest(titles, title, message);
}

/**
 * A test of the crashed file that had failed with a report before the crash
 * (canary damage): Jest gets a file's results when it ends, so the crash
 * took that failure with it. Undefined when the report names no test of it.
 */
function lostTest(e: ViolationEvent, file: string, crash: ViolationEvent, label: string): AssertionResult | undefined {
  if (!e.test?.startsWith(`${file} > `)) return undefined;
  const titles = e.test.slice(file.length + 3).split(' > ');
  const title = titles.pop()!;
  const message = `${reportText(e)}(this test failed with it before a guard fault killed ${label} ${crash.pid}, which took its result with it)`;
  return failedTest(titles, title, message);
}

/**
 * Adds the crashed tests of a file that failed to run to its results (and
 * the run's counts), and the tests of that file that failed with a report
 * before the crash (their results died with the process); returns the
 * crash events it added them for. Called before any reporter that writes
 * results out. `all`: the run's events; `project`: the file's Jest project
 * (displayName), whose crashes alone are its own; `shown`: event files
 * whose report Jest already showed (markReportsShown).
 */
export function addCrashedTests(
  testResult: TestResult,
  aggregated: AggregatedResult,
  all: { fatal: readonly ViolationEvent[]; events: readonly ViolationEvent[]; shown: readonly string[] },
  label: string,
  project: string | undefined,
): ViolationEvent[] {
  if (!testResult.testExecError || testResult.testResults.length > 0) return [];
  const events = eventsOf(testResult, all.fatal, project);
  const rel = path.relative(process.cwd(), testResult.testFilePath);
  const file = testFilePrefix(testResult.testFilePath, project);
  const tests = events.flatMap((e) => [
    ...earlierReports(all.events, e, all.shown).flatMap((earlier) => lostTest(earlier, file, e, label) ?? []),
    crashedTest(e, rel, label),
  ]);
  for (const test of tests) {
    testResult.testResults.push(test);
    testResult.numFailingTests++;
    aggregated.numFailedTests++;
    aggregated.numTotalTests++;
    // As Jest prints a failed test: `● describe › test`, then the message indented.
    const title = [...test.ancestorTitles, test.title].join(' › ');
    testResult.failureMessage = `${testResult.failureMessage ?? ''}\n  ● ${title}\n\n${test.failureMessages[0].replace(/^/gm, '    ')}\n`;
  }
  return events;
}
