// `reporters: ['default', '@mate-guard/jest-env/reporter']`: the main-process
// side of a guarded Jest run, for plain `jest` (mate-jest adds it too).
//
// Jest builds its reporters before it starts any worker (TestScheduler:
// reporters, onRunStart, then the test runner and its workers), and runs
// files in band in this very process: so the reporter's constructor starts
// the run here (report directory, the handoff every test file's
// environment reads) unless another process owns it (mate-jest, guard-run,
// a rerun). At the end of each run (every rerun in watch mode) it prints a
// dead worker's report and the test it killed, the summary line, and fails
// the run (getLastError) when a violation failed no test. In band, a fault
// kills Jest itself: the dying process prints its report; the summary
// needs mate-jest, which watches Jest from outside.
import {
  exitOnConfigError,
  flushGuardStats,
  markResultsShown,
  markTestsStarted,
  GuardConfigError,
  GuardedRun,
  processState,
  readOptions,
  runOwnership,
  resolveRunnerSettings,
  rowsOn,
  workerCrash,
  readReportDir,
  type RunnerResolution,
} from '@mate-guard/core/internal';
import type { AggregatedResult, TestResult } from '@jest/test-result';
import type { Config } from '@jest/types';

import { projectName } from '../environment/project';
import { checkJestVersion, jestVersionAbove } from '../jest-version';
import { jestOptionName, jestSpelling } from '../spelling';
import { addCrashedTests } from './crash-results';
import { checkFileSettings } from './file-settings';

/** The reporter is there, guarding is on, and no test file used the environment. */
const NOTHING_GUARDED_FIX =
  "set testEnvironment: '@mate-guard/jest-env' in the Jest config (or run mate-jest --guard-alloc, which supplies it); a `@jest-environment` docblock picks another one for its file";

const SOURCE = "reporter options (['@mate-guard/jest-env/reporter', { ... }])";
const WORKER = 'Jest worker';

/** The reporter's options: the runner settings by their Jest names; anything else is a mistake. */
function reporterOptions(options: unknown): Record<string, unknown> {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options))
    throw new GuardConfigError(`${SOURCE}: ${JSON.stringify(options)} is not an options object`);
  const known = rowsOn('runner').map(jestOptionName);
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw new GuardConfigError(`${SOURCE}: unknown option ${JSON.stringify(key)}; known: ${known.join(', ')}`);
  }
  return options as Record<string, unknown>;
}

/**
 * One per Jest process: Jest makes new reporters for every watch-mode
 * rerun, while the workers (and, in band, this process's allocator) keep
 * the configuration of the first run.
 */
interface Session {
  /** Set when this process owns the run; else the owner's report directory, read for crashed tests only. */
  run: GuardedRun | undefined;
  dir: string | undefined;
  /** Event files already put back into results (watch mode: earlier reruns). */
  announced: Set<string>;
}

const sessionState = processState<Session>('mate-guard.jest.reporter');

function startSession(options: unknown): Session {
  const known = sessionState.get();
  if (known) return known;
  // Jest's main process: it owns the run unless mate-jest (not watching), guard-run or a rerun does.
  const { owns, handed: handoff } = runOwnership(true);
  let session: Session;
  if (!owns) {
    // The owner prints the summary; this process only reads its directory for crashed tests.
    session = { run: undefined, dir: handoff?.settings.reportDir, announced: new Set() };
  } else {
    // Plain jest: MATE_JEST_GUARD_* and the reporter's options (flags are
    // Jest's own). mate-jest --watch resolved its flags and left the run to us.
    const resolved: RunnerResolution = handoff
      ? { settings: handoff.settings, explicit: handoff.explicit }
      : resolveRunnerSettings({
          runner: 'jest',
          env: process.env,
          options: { values: reporterOptions(options), spelling: jestSpelling, source: SOURCE },
        });
    if (handoff) readOptions(reporterOptions(options), jestSpelling, SOURCE); // still checked
    // Plain jest: the Jest running this process (its bin is the main module), checked before anything is guarded.
    if (resolved.settings.enabled) checkJestVersion(jestVersionAbove(process.argv[1]));
    const run = GuardedRun.start({ runner: 'jest', settings: resolved.settings, explicit: resolved.explicit });
    session = { run, dir: run.dir, announced: new Set() };
  }
  sessionState.set(session);
  return session;
}

export default class GuardReporter {
  private readonly session: Session;
  private readonly watching: boolean;
  private error: Error | undefined;

  constructor(globalConfig: Config.GlobalConfig, options?: unknown) {
    try {
      this.session = startSession(options);
    } catch (err) {
      // Thrown, Jest would print it with its stack and status 1.
      if (err instanceof GuardConfigError) exitOnConfigError('mate-guard', err);
      throw err;
    }
    this.watching = Boolean(globalConfig.watch || globalConfig.watchAll);
  }

  /** Jest is about to run its test files: a run with any is marked as one that ran tests (none: no match, a shard past the files). */
  onRunStart(results: AggregatedResult): void {
    if (this.session.dir && results.numTotalTestSuites > 0) markTestsStarted(this.session.dir);
  }

  /** Before the file runs (and before a worker gets it): its project's testEnvironmentOptions. */
  onTestFileStart(test: { context: { config: Config.ProjectConfig } }): void {
    checkFileSettings(test.context.config);
  }

  /**
   * A crashed file: its dead test, and the tests that failed with a report
   * before the crash, back into the results, before reporters that write
   * them out (JUnit, --json).
   */
  onTestFileResult(
    test: { context: { config: Config.ProjectConfig } },
    testResult: TestResult,
    aggregated: AggregatedResult,
  ): void {
    if (!testResult.testExecError || !this.session.dir) return;
    const { announced } = this.session;
    const report = readReportDir(this.session.dir);
    const fatal = report.violations.filter((v) => workerCrash(v) && v.file && !announced.has(v.file));
    const all = { fatal, events: report.violations, shown: report.shownReports };
    const project = projectName(test.context.config.displayName);
    for (const e of addCrashedTests(testResult, aggregated, all, WORKER, project)) announced.add(e.file!);
  }

  onRunComplete(_contexts: unknown, results: AggregatedResult): void {
    // Jest has shown the results: a death of this process from now on (at exit) takes none with it.
    if (this.session.dir) markResultsShown(this.session.dir);
    const run = this.session.run;
    if (!run) return;
    const status = results.success && !results.wasInterrupted ? 0 : 1;
    // In band the tests ran here: this process's counters, as of now, for the summary.
    flushGuardStats();
    const verdict = run.finish({
      status,
      // A dead worker's report went through Jest's pipe, which Jest may not drain: print it again,
      // and what it had reported to its tests before it died, which Jest never received.
      attribution: { label: () => WORKER, reprint: () => true, earlier: true },
      // Jest passed, yet a process found damage (e.g. at exit): show it, fail.
      showReportsIfPassed: true,
      more: this.watching,
      nothingGuardedFix: NOTHING_GUARDED_FIX,
      testsMarked: true,
    });
    if (!verdict.quiet) process.stderr.write(verdict.text);
    // Jest's idiom for failing a run it thinks passed: the reporter's error.
    this.error = verdict.failsPassedRun
      ? new Error('mate-guard: a memory violation failed no test (see its report above)')
      : undefined;
  }

  /** Jest fails the run when a reporter has an error. */
  getLastError(): Error | undefined {
    return this.error;
  }
}
