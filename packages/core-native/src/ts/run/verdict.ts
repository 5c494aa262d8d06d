// The verdict on a run, by one rule for every way a run ends: a runner's
// main process or a launcher after its runner (GuardedRun.finish), a process
// guarded on its own at its exit, and `mate report` after the fact. Runner
// adapters only translate it into their runner's idiom.
import type { ViolationEvent } from '../report/event';
import { notCountedAsViolation } from '../report/notices';
import type { RunReport } from './report-dir';
import { mergeSummaries, summarize, type SummaryCounts } from './summary';

/**
 * The exit code of a run: the runner's (or command's) own failure wins; a
 * clean exit is 1 when a violation was not handed to a caller that could
 * fail a test with it (a crashed process, damage found at a process's exit:
 * a runner may drop those processes' status). `status` undefined: no
 * runner's result covers the violations (`mate report` reads runs after the
 * fact), so every one not suppressed fails. `unreadableReports`: report
 * files of the run that could not be read (each counted as a violation).
 */
export function runExitCode(
  status: number | undefined,
  violations: readonly ViolationEvent[],
  unreadableReports = 0,
): number {
  // A report no one could read may hold anything: it fails like one no caller had.
  const failing =
    unreadableReports > 0 ||
    violations.some(
      (v) => !v.suppressed && !notCountedAsViolation(v) && (status === undefined || v.delivered !== 'caller'),
    );
  const own = status ?? 0;
  return own === 0 && failing ? 1 : own;
}

export interface Verdict {
  summary: SummaryCounts;
  exitCode: number;
  /** The runner passed, yet a violation failed no test: the adapter fails the run in its runner's idiom. */
  failsPassedRun: boolean;
  /** Some process guarded (it left counters or a report). */
  guarded: boolean;
}

/**
 * The verdict on one run's report directory, or on several read as one
 * (`mate report`: each run counted by itself, as pids repeat across runs).
 * `skippedByTagHere`: tag skips of the deciding process, when it wrote no counters file.
 */
export function verdictOf(runs: readonly RunReport[], status: number | undefined, skippedByTagHere = 0): Verdict {
  const summary = mergeSummaries(runs.map((r, i) => summarize(r, i === 0 ? skippedByTagHere : 0)));
  const violations = runs.flatMap((r) => r.violations);
  const exitCode = runExitCode(status, violations, summary.unreadable);
  return {
    summary,
    exitCode,
    failsPassedRun: exitCode !== 0 && (status ?? 0) === 0,
    guarded: runs.some((r) => r.processes.length > 0 || r.violations.length > 0 || r.unreadable.length > 0),
  };
}
