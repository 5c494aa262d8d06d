// One run, owned by the process that starts it (a mate-* CLI, guard-run, or
// a plugin's main-process reporter; owner.ts decides which): it makes the
// report directory, hands the resolved settings to every worker and child,
// and at the end reads the directory once, names crashed processes' tests,
// and gives the closing text with the verdict (verdict.ts: one rule).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { reportText } from '../report/render';
import type { ViolationEvent } from '../report/event';
import { rewriteEventFile } from '../report/files';
import { repoRoot } from '../report/source-paths';
import { loadSuppressions, matchSuppression } from '../report/suppressions';
import { writeHandoff } from '../settings/handoff';
import type { GuardSettings, SettingKey } from '../settings/table';
import {
  formatSilentModules,
  formatUnmatchedGlobs,
  silentNativeModules,
  unmatchedNativeGlobs,
} from '../install/native-heap';
import { loadNative } from '../install/native';
import { formatCrashAttribution, workerCrash } from './attribution';
import { earlierReportsText } from './earlier';
import { closeReportDir, type ProcessGuardStats } from './process-stats';
import { RECORD_FILE, recordProjectSettings, writeRunRecord } from './record';
import { createReportDir, readReportDir, writeRunInfo, type RunReport } from './report-dir';
import { formatNothingGuarded, formatSummary, formatUnreadable } from './summary';
import { verdictOf, type Verdict } from './verdict';

export { runExitCode } from './verdict';

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

/** The run's end: its verdict and the closing text, for the runner's adapter to translate. */
export interface RunVerdict extends Verdict {
  /** Attributions, reports worth repeating, the summary, where the JSON is. */
  text: string;
  /** Nothing to say: guarding was off and no process guarded (the text is not printed). */
  quiet: boolean;
  /** Guarding was asked for (nothingGuardedFix given) and no process guarded: the text says so instead of a summary. */
  nothingGuarded: boolean;
  report: RunReport;
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
  /**
   * Watch mode: more rounds follow in the same directory (the workers keep
   * one configuration); this end covers what happened since the last one.
   */
  more?: boolean;
  /**
   * How to load the guard in this runner: when no process of the run
   * installed it (no counters, no report), one warning line with it
   * replaces the summary, so a run that guarded nothing never looks guarded.
   */
  nothingGuardedFix?: string;
  /**
   * The runner's adapter marks each run that starts a test file
   * (markTestsStarted). Without the mark the run ran no test (a filter that
   * matched nothing, an empty folder, a shard with no file, an argument the
   * runner refused): guarding nothing is then no mistake, and the runner's
   * own words and exit status stand alone.
   */
  testsMarked?: boolean;
}

const statsKey = (p: ProcessGuardStats) => `${p.pid}/${p.threadId}`;

/** A process's counters since `base` (a process that ran an earlier round too: watch mode in band). */
function since(p: ProcessGuardStats, base: ProcessGuardStats | undefined): ProcessGuardStats {
  if (!base) return p;
  const pt = p.passThrough;
  const bt = base.passThrough;
  return {
    ...p,
    allocations: p.allocations - base.allocations,
    fallbacks: p.fallbacks - base.fallbacks,
    skippedByTag: p.skippedByTag - base.skippedByTag,
    passThrough:
      pt && bt
        ? {
            resizable: pt.resizable - bt.resizable,
            shared: pt.shared - bt.shared,
            subclass: pt.subclass - bt.subclass,
            tooLarge: pt.tooLarge - bt.tooLarge,
          }
        : pt,
  };
}

export class GuardedRun {
  private report: RunReport | undefined;
  // Watch mode: what earlier rounds reported, so that each round tells its own.
  private readonly seen = new Set<string>();
  private readonly baseline = new Map<string, ProcessGuardStats>();
  private held = false;
  private exitHook = false;

  /**
   * `settings`: as handed to the run's processes (the report directory is
   * the run's). `keep`: the directory was asked for (reportDir): it stays, clean or not.
   */
  private constructor(
    readonly dir: string,
    readonly settings: GuardSettings,
    private readonly keep: boolean,
  ) {}

  static start(start: RunStart): GuardedRun {
    // The run's processes each load the allocator: when no binary fits
    // this machine, say so here once, in one line, before any test.
    loadNative();
    const given = start.settings.reportDir;
    const dir = createReportDir(start.runner, given);
    const run = new GuardedRun(dir, { ...start.settings, reportDir: dir }, given !== undefined);
    writeRunInfo(dir, {
      runner: start.runner,
      pid: process.pid,
      started: new Date().toISOString(),
      suppressions: run.settings.suppressions ?? null,
      cwd: process.cwd(),
      root: repoRoot(process.cwd()),
    });
    // A rerun is ours, not the user's: `mate replay` replays the run it came from.
    if (start.runner !== 'rerun')
      writeRunRecord(dir, start.runner, { settings: run.settings, explicit: start.explicit ?? [] });
    writeHandoff(
      {
        settings: run.settings,
        explicit: start.explicit ?? [],
        ownerPid: process.pid,
        ...(start.autoInstall ? { autoInstall: true } : {}),
      },
      start.env ?? process.env,
    );
    return run;
  }

  /**
   * Each project's settings, kept in the run's record for `mate replay`
   * once the runner knows its projects (none kept where none differs from
   * the run's; a rerun keeps no record).
   */
  recordProjects(projects: Record<string, GuardSettings>): void {
    if (fs.existsSync(path.join(this.dir, RECORD_FILE))) recordProjectSettings(this.dir, projects);
  }

  /**
   * A launcher whose runner ends every round itself (watch mode): the
   * settings go to the runner without an owner, and the runner's main
   * process owns the run (runOwnership).
   */
  static leaveTo(env: NodeJS.ProcessEnv, settings: GuardSettings, explicit: SettingKey[] = []): void {
    writeHandoff({ settings, explicit }, env);
  }

  /** What the run's processes wrote so far (since the last round), read once, kept for finish(). */
  read(): RunReport {
    if (!this.report) {
      const all = readReportDir(this.dir);
      this.report = {
        dir: all.dir,
        violations: all.violations.filter((v) => !v.file || !this.seen.has(v.file)),
        processes: all.processes.map((p) => since(p, this.baseline.get(statsKey(p)))),
        unreadable: all.unreadable.filter((u) => !this.seen.has(u.file)),
        resultsShown: all.resultsShown,
        shownReports: all.shownReports,
        testsStarted: all.testsStarted,
      };
      this.markSuppressed(this.report.violations);
    }
    return this.report;
  }

  /**
   * Events no process could match against the suppressions (a fault's
   * printer without the run's file): matched here, the same way, and filed.
   */
  private markSuppressed(events: ViolationEvent[]): void {
    if (!this.settings.suppressions) return;
    let rules: ReturnType<typeof loadSuppressions>;
    try {
      rules = loadSuppressions(this.settings.suppressions);
    } catch {
      return; // checked at the start of the run; gone since: the processes' own verdicts stand
    }
    for (const e of events) {
      if (e.suppressed) continue;
      const verdict = matchSuppression(e, rules);
      if (!verdict) continue;
      e.suppressed = verdict;
      if (e.file) rewriteEventFile(e.file, e);
    }
  }

  /** Events of processes a guard fault killed. */
  crashed(): ViolationEvent[] {
    return this.read().violations.filter(workerCrash);
  }

  /**
   * The verdict and the closing text (attributions, reports worth
   * repeating, the summary, where the JSON is). Removes the directory when
   * clean and not asked for.
   */
  finish(end: RunEnd): RunVerdict {
    const report = this.read();
    const verdict = verdictOf([report], end.status, end.skippedByTagHere ?? 0);
    let text = '';
    const printed = new Set<ViolationEvent>();
    const at = end.attribution;
    if (at) {
      for (const e of report.violations.filter(workerCrash)) {
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
        if (e.fatal || e.suppressed) continue;
        text += reportText(e);
        printed.add(e);
      }
    }
    // Nothing is lost: a report no process printed or handed to a test (a
    // printer that could not run, a Python process's finding) is printed here.
    for (const e of report.violations) if (e.delivered === undefined && !printed.has(e)) text += reportText(e);
    // Named, never skipped: a report cut short or never finished counts as a violation.
    text += formatUnreadable(report.unreadable);
    // No test ran and nothing guarded: the runner's own words (no tests found, a refused argument) stand alone.
    const idle = end.testsMarked === true && !report.testsStarted && !verdict.guarded;
    const nothing = end.nothingGuardedFix !== undefined && !verdict.guarded && !idle;
    if (!idle) text += nothing ? formatNothingGuarded(end.nothingGuardedFix!) : formatSummary(verdict.summary);
    if (this.settings.nativeModules.length)
      text +=
        formatUnmatchedGlobs(unmatchedNativeGlobs(report.dir)) + formatSilentModules(silentNativeModules(report.dir));
    const any = report.violations.length > 0 || report.unreadable.length > 0;
    if (any) this.held = true;
    if (any || this.keep) text += `[mate-guard] reports: ${report.dir}\n`;
    if (end.more) this.nextRound(report);
    else if (!this.held && !this.keep) this.remove();
    return {
      ...verdict,
      text,
      quiet: idle || (!this.settings.enabled && !verdict.guarded),
      nothingGuarded: nothing && this.settings.enabled,
      report,
    };
  }

  /** The clean temporary directory goes, for good: nothing of this process writes into it again. */
  private remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
    closeReportDir(this.dir);
  }

  /** Watch mode: the next read starts after this round; a clean temporary directory goes at exit. */
  private nextRound(report: RunReport): void {
    for (const v of report.violations) if (v.file) this.seen.add(v.file);
    for (const u of report.unreadable) this.seen.add(u.file);
    for (const p of readReportDir(this.dir).processes) this.baseline.set(statsKey(p), p);
    this.report = undefined;
    if (!this.exitHook) {
      this.exitHook = true;
      process.once('exit', () => {
        if (!this.held && !this.keep) this.remove();
      });
    }
  }
}
