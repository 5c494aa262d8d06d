// A run's report directory: every process of the run writes its violation
// events and its counters there; the run's owner reads it once at the end.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { ViolationEvent } from '../report/event';
import { countersShapeWhy, MAX_EVENT_BYTES } from '../report/event-shape';
import {
  EVENT_FILE,
  parseChecked,
  readCapped,
  readEventFile,
  ShapeError,
  UNFINISHED_EVENT_FILE,
} from '../report/files';
import { unreadableWhy } from '../report/unreadable';
import type { ProcessGuardStats } from './process-stats';
import { perUserParent, writeNewFile } from './private-files';

/** A file of the run that could not be read: named, never skipped. */
export interface UnreadableFile {
  file: string;
  /** `report`: a violation's event (counted as a violation); `counters`: a process's counters. */
  holds: 'report' | 'counters';
  why: string;
}

export interface RunReport {
  dir: string;
  violations: ViolationEvent[];
  processes: ProcessGuardStats[];
  unreadable: UnreadableFile[];
  /** Processes whose runner had shown the run's results (markResultsShown) before they ended. */
  resultsShown: number[];
  /** Event files (names) whose report the runner showed with its test's result (markReportsShown). */
  shownReports: string[];
  /** The runner started a test file (markTestsStarted); false: it ran none (nothing matched, or it stopped on its own error). */
  testsStarted: boolean;
}

const RESULTS_SHOWN = /^results-shown-(\d+)$/;
const REPORT_SHOWN = /^shown-(mate-guard-\d+-\d+\.json)$/;
const TESTS_STARTED = /^tests-started-\d+$/;

/**
 * The runner's main process started a test file (its adapter marks it): a
 * run without the mark ran no test, so guarding nothing was no mistake there.
 */
export function markTestsStarted(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, `tests-started-${process.pid}`), '');
  } catch {
    // the directory went: nobody will ask
  }
}

/**
 * The runner in this process has shown the run's results (Jest's
 * onRunComplete): a death of this process after that (at exit) took no
 * results with it, and the reports it gave its tests were shown.
 */
export function markResultsShown(dir: string): void {
  try {
    writeNewFile(path.join(dir, `results-shown-${process.pid}`), '');
  } catch {
    // the directory went: nobody will ask
  }
}

/**
 * The runner showed these reports with their tests' results (Jest prints
 * each file's results when the file ends): a process that dies later in
 * another file took them with it no more (earlier.ts). The printer of a
 * dying process reads the same marks (report/earlier_reports.cc).
 */
export function markReportsShown(dir: string, events: readonly ViolationEvent[]): void {
  for (const e of events) {
    if (!e.file) continue;
    try {
      writeNewFile(path.join(dir, `shown-${path.basename(e.file)}`), '');
    } catch {
      // marked already, or the directory went
    }
  }
}

/**
 * A fresh directory for one run: inside `parent` when one was given (kept
 * for `mate report`), else a temporary one under this user's private
 * `<tmp>/mate-guard-<uid>/` (perUserParent).
 */
export function createReportDir(runner: string, parent?: string): string {
  if (parent === undefined) return fs.mkdtempSync(path.join(perUserParent(), `${runner}-`));
  fs.mkdirSync(parent, { recursive: true });
  return fs.mkdtempSync(
    path.join(path.resolve(parent), `${runner}-${new Date().toISOString().replace(/[:.]/g, '-')}-`),
  );
}

/** What a run's directory says about the run (`run.json`): read by the report printer and `mate report`. */
export interface RunInfo {
  tool: 'mate-guard';
  runner: string;
  pid: number;
  started: string;
  /** The run's suppressions file (absolute), for the printer of a dying process. */
  suppressions: string | null;
  /** Its working directory and repository (source paths in CI formats); absent in older runs. */
  cwd?: string;
  root?: string;
}

const RUN_INFO = 'run.json';

export function writeRunInfo(dir: string, info: Omit<RunInfo, 'tool'>): void {
  writeNewFile(path.join(dir, RUN_INFO), JSON.stringify({ tool: 'mate-guard', ...info }) + '\n');
}

export function readRunInfo(dir: string): RunInfo | undefined {
  return runInfoOf(dir).info;
}

/**
 * run.json of `dir`, read as every report file is (readCapped: a regular
 * file, never through a link, capped): its info when it is mate-guard's;
 * `why` when one is there but cannot be read (absent: neither).
 */
export function runInfoOf(dir: string): { info?: RunInfo; why?: string } {
  let text: string | undefined;
  try {
    text = readCapped(path.join(dir, RUN_INFO), MAX_EVENT_BYTES);
    const info = JSON.parse(text) as RunInfo | null;
    return info?.tool === 'mate-guard' ? { info } : {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { why: err instanceof ShapeError ? err.message : unreadableWhy(err, text) };
  }
}

function readCounters(file: string): ProcessGuardStats | string {
  let text: string | undefined;
  try {
    text = readCapped(file, MAX_EVENT_BYTES);
    return parseChecked<ProcessGuardStats>(text, countersShapeWhy);
  } catch (err) {
    return err instanceof ShapeError ? err.message : unreadableWhy(err, text);
  }
}

/**
 * The run's events and counters. Every file that should hold one and does
 * not parse is listed in `unreadable`: a CI artifact cut short, a disk
 * that filled up while a report was written (its `.tmp` left, the report
 * never filed), a file copied without its permissions.
 */
export function readReportDir(dir: string): RunReport {
  const report: RunReport = {
    dir,
    violations: [],
    processes: [],
    unreadable: [],
    resultsShown: [],
    shownReports: [],
    testsStarted: false,
  };
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return report;
  }
  const present = new Set(names);
  for (const name of names) {
    const file = path.join(dir, name);
    if (EVENT_FILE.test(name)) {
      const v = readEventFile(file);
      if (typeof v === 'string') report.unreadable.push({ file, holds: 'report', why: v });
      else report.violations.push(v);
    } else if (UNFINISHED_EVENT_FILE.test(name) && !present.has(name.slice(0, -'.tmp'.length))) {
      // Beside its report it is a rewrite that did not finish (the report stands); alone, a report never filed.
      report.unreadable.push({
        file,
        holds: 'report',
        why: 'its writing never finished (the disk filled up, or the process died while writing it)',
      });
    } else if (/^stats-\d+-\d+\.json$/.test(name)) {
      const s = readCounters(file);
      if (typeof s === 'string') report.unreadable.push({ file, holds: 'counters', why: s });
      else report.processes.push(s);
    } else if (RESULTS_SHOWN.test(name)) {
      report.resultsShown.push(Number(RESULTS_SHOWN.exec(name)![1]));
    } else if (REPORT_SHOWN.test(name)) {
      report.shownReports.push(REPORT_SHOWN.exec(name)![1]);
    } else if (TESTS_STARTED.test(name)) {
      report.testsStarted = true;
    }
  }
  return report;
}
