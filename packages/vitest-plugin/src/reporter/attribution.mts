// Crash attribution. When a worker dies from a guard fault Vitest reports
// only "Worker exited unexpectedly" and leaves the file unfinished; the
// report the dying process wrote names the test, and here it is put back on
// that test and its file, so every reporter (default, verbose, JSON) shows
// the failure with the report text.
import * as path from 'node:path';

import {
  crashFailure,
  crashInFile,
  earlierReports,
  formatTestPath,
  reportText,
  type ViolationEvent,
} from '@mate-guard/core/internal';
import { experimental_getRunnerTask, type TestModule } from 'vitest/node';

type RunnerTask = ReturnType<typeof experimental_getRunnerTask>;

interface Attribution {
  event: ViolationEvent;
  /** The dying process's report. */
  text: string;
  /** The crashed file, when one could be told. */
  module: TestModule | undefined;
}

/** The file as the worker's test paths begin: relative, after its project's name (the same file can run in two projects). */
function filePath(testModule: TestModule): string {
  return formatTestPath(path.relative(process.cwd(), testModule.moduleId), [], testModule.project.name || undefined);
}

/** A crash's file (core's attribution: its test, else the test that made the damaged allocation). */
const crashedIn = (event: ViolationEvent, testModule: TestModule): boolean => crashInFile(event, filePath(testModule));

/** An earlier report's file: the test it was handed to. */
function reportedIn(event: ViolationEvent, testModule: TestModule): boolean {
  const file = filePath(testModule);
  return !!event.test && (event.test === file || event.test.startsWith(`${file} > `));
}

function unfinished(testModule: TestModule): boolean {
  const state = experimental_getRunnerTask(testModule).result?.state;
  return state === undefined || state === 'run' || state === 'queued';
}

/**
 * Pairs each fatal event with its file: by the test path in the report (or
 * the test that made the damaged allocation), else (a fault outside any
 * test) the one file the crash left unfinished.
 */
export function attribute(events: readonly ViolationEvent[], modules: readonly TestModule[]): Attribution[] {
  const open = modules.filter(unfinished);
  return events.map((event) => ({
    event,
    text: reportText(event),
    module: modules.find((m) => crashedIn(event, m)) ?? (open.length === 1 ? open[0] : undefined),
  }));
}

/**
 * The reports each crashed worker handed to Vitest before it died, paired
 * with their files. Vitest batches a worker's task updates, so a test
 * failed just before the crash can reach the main process as never run or
 * passed (seen with CI=true): those must still fail with their report.
 */
export function attributeEarlier(
  all: readonly ViolationEvent[],
  crashes: readonly ViolationEvent[],
  modules: readonly TestModule[],
): Attribution[] {
  return crashes
    .flatMap((crash) => earlierReports(all, crash))
    .map((event) => ({
      event,
      text: reportText(event),
      module: modules.find((m) => reportedIn(event, m)),
    }));
}

function findTest(task: RunnerTask, file: string, wanted: string): RunnerTask | undefined {
  if (task.type === 'test') return `${file} > ${task.fullTestName}` === wanted ? task : undefined;
  for (const child of task.tasks) {
    const found = findTest(child, file, wanted);
    if (found) return found;
  }
  return undefined;
}

/** The line shown in the main process for one crash (core's wording, shared by every runner). */
export function crashLine(a: Attribution): string {
  return crashFailure(a.event, 'test worker', 'this file').line;
}

/**
 * Fails the test an earlier report names when Vitest's result for it does
 * not show the failure. False: Vitest already had it (nothing to do).
 */
export function markLost(a: Attribution): boolean {
  const file = a.module ? experimental_getRunnerTask(a.module) : undefined;
  const test = file && a.event.test ? findTest(file, filePath(a.module!), a.event.test) : undefined;
  if (test?.result?.state === 'fail') return false;
  const error = {
    name: 'GuardViolationError',
    message: `${a.text}[mate-guard] the worker reported this to Vitest before a guard fault killed it; Vitest never received the result.`,
    stack: '',
  };
  if (test) test.result = { ...test.result, state: 'fail', errors: [...(test.result?.errors ?? []), error] };
  if (file)
    file.result = {
      ...file.result,
      state: 'fail',
      ...(test ? {} : { errors: [...(file.result?.errors ?? []), error] }),
    };
  return true;
}

/** Marks the crashed test and its file failed, with the report as the error. */
export function markFailed(a: Attribution): void {
  if (!a.module) return;
  const file = experimental_getRunnerTask(a.module);
  const failure = crashFailure(a.event, 'test worker', 'this file');
  // The report first: JUnit and other reporters show a failure's first lines (core's one message).
  const error = { name: failure.name, message: failure.message, stack: '' };
  const crashed = failure.file === undefined ? null : failure.test;
  const test = crashed ? findTest(file, filePath(a.module), crashed) : undefined;
  if (test) test.result = { ...test.result, state: 'fail', errors: [...(test.result?.errors ?? []), error] };
  // The file fails too; it carries the report itself only when no test could be named (shown once).
  file.result = { ...file.result, state: 'fail' };
  if (!test) file.result.errors = [...(file.result.errors ?? []), error];
}
