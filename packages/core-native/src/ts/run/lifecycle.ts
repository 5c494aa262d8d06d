// One run, owned by the process that starts it (a mate-* CLI, guard-run, or
// a plugin's main-process reporter): it makes the report directory, hands
// the resolved settings to every worker and child, and at the end reads the
// directory once, names crashed processes' tests, prints the summary and
// decides the exit code by one rule.
import * as fs from 'node:fs';

import { reportText } from '../report/render';
import type { ViolationEvent } from '../report/event';
import { writeHandoff } from '../settings/handoff';
import type { GuardSettings, SettingKey } from '../settings/table';
import { formatUnmatchedGlobs, unmatchedNativeGlobs } from '../allocator/native-heap';
import { formatCrashAttribution } from './attribution';
import { earlierReportsText } from './earlier';
import { createReportDir, readReportDir, type RunReport } from './report-dir';
import { formatSummary, summarize } from './summary';

/**
 * The exit code of a run: the command's own failure wins; a clean exit is
 * 1 when a violation was not handed to a caller that could fail a test with
 * it (a crashed process, damage found at a process's exit: a runner may
 * drop those processes' status).
 */
export function runExitCode(status: number, violations: readonly ViolationEvent[]): number {
  return status === 0 && violations.some((v) => v.delivered !== 'caller') ? 1 : status;
}

interface RunStart {
  /** Names the report directory: `mate-guard-<runner>-XXXX`. */
  runner: string;
  settings: GuardSettings;
  /** Keys a flag or the environment set (see Handoff). */
  explicit?: SettingKey[];
  /** Where the handoff goes: this process's env (workers inherit it) or a child's. */
  env?: NodeJS.ProcessEnv;
  /** guard-run: every Node process installs the allocator at start. */
  autoInstall?: boolean;
}

export interface CrashAttribution {
  /** Names a crashed process: `Jest worker`, `mocha process`, ... */
  label(event: ViolationEvent): string;
  /** Also print its report (the runner may have dropped the dead process's stderr). */
  reprint?(event: ViolationEvent): boolean;
  /**
   * Also print what the dead process reported to its runner earlier (the
   * runner shows a file's results when the file ends: Jest, Mocha).
   */
  earlier?: boolean;
}

export interface RunEnd {
  /** The runner's (or the command's) own exit status. */
  status: number;
  /** Name crashed processes' tests (omit where the plugin did it itself). */
  attribution?: CrashAttribution;
  /** When the runner passed, print every report again: a worker's stderr may have been lost. */
  showReportsIfPassed?: boolean;
  /** Tests skipped by tag in this process, when it wrote no counters file. */
  skippedByTagHere?: number;
}

export class GuardedRun {
  private report: RunReport | undefined;

  /** `settings`: as handed to the run's processes (the report directory is the run's). */
  private constructor(readonly dir: string, readonly settings: GuardSettings) {}

  static start(start: RunStart): GuardedRun {
    const dir = createReportDir(start.runner);
    const run = new GuardedRun(dir, { ...start.settings, reportDir: dir });
    writeHandoff({
      settings: run.settings,
      explicit: start.explicit ?? [],
      ownerPid: process.pid,
      ...(start.autoInstall ? { autoInstall: true } : {}),
    }, start.env ?? process.env);
    return run;
  }

  /** What the run's processes wrote so far (read once, kept for finish()). */
  read(): RunReport {
    this.report ??= readReportDir(this.dir);
    return this.report;
  }

  /** Events of processes a guard fault killed. */
  crashed(): ViolationEvent[] {
    return this.read().violations.filter((v) => v.fatal);
  }

  /**
   * The closing text (attributions, reports worth repeating, the summary,
   * where the JSON is) and the exit code. Removes the directory when clean.
   */
  finish(end: RunEnd): { text: string; exitCode: number; report: RunReport } {
    const report = this.read();
    let text = '';
    const printed = new Set<ViolationEvent>();
    const at = end.attribution;
    if (at) {
      for (const e of report.violations.filter((v) => v.fatal)) {
        text += formatCrashAttribution(e, at.label(e));
        if (at.earlier) text += earlierReportsText(report.dir, e, `${at.label(e)} ${e.pid}`);
        if (at.reprint?.(e)) {
          text += `[mate-guard] its report, from that JSON file:\n${reportText(e)}`;
          printed.add(e);
        }
      }
    }
    if (end.status === 0 && end.showReportsIfPassed) {
      for (const e of report.violations) {
        if (e.fatal) continue;
        text += reportText(e);
        printed.add(e);
      }
    }
    // Nothing is lost: a report no process printed or handed to a test (a
    // printer that could not run, a Python process's finding) is printed here.
    for (const e of report.violations) if (e.delivered === undefined && !printed.has(e)) text += reportText(e);
    text += formatSummary(summarize(report, end.skippedByTagHere ?? 0));
    if (this.settings.nativeModules.length) text += formatUnmatchedGlobs(unmatchedNativeGlobs(report.dir));
    if (report.violations.length) text += `[mate-guard] reports: ${report.dir}\n`;
    else fs.rmSync(report.dir, { recursive: true, force: true });
    return { text, exitCode: runExitCode(end.status, report.violations), report };
  }
}
