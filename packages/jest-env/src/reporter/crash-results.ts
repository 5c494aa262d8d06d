// A test file whose worker a guard fault killed: Jest records the file as
// "failed to run" with no tests in it, so reporters that list tests (the
// JUnit ones, --json) lose the test that crashed. The dying process's event
// names it: it is put back as a failed test whose message is the report.
import * as path from 'node:path';

import { crashFailure, crashInFile, type ViolationEvent } from '@mate-guard/core/internal';
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

function crashedTest(e: ViolationEvent, rel: string, label: string): AssertionResult {
  const { suites: titles, title, message } = crashFailure(e, label, rel);
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

/**
 * Adds the crashed tests of a file that failed to run to its results (and
 * the run's counts); returns the events it added them for. Called before
 * any reporter that writes results out. `project`: the file's Jest project
 * (displayName), whose crashes alone are its own.
 */
export function addCrashedTests(
  testResult: TestResult,
  aggregated: AggregatedResult,
  fatal: readonly ViolationEvent[],
  label: string,
  project: string | undefined,
): ViolationEvent[] {
  if (!testResult.testExecError || testResult.testResults.length > 0) return [];
  const events = eventsOf(testResult, fatal, project);
  const rel = path.relative(process.cwd(), testResult.testFilePath);
  for (const e of events) {
    const test = crashedTest(e, rel, label);
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
