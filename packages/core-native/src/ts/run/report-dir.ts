// A run's report directory: every process of the run writes its violation
// events and its counters there; the run's owner reads it once at the end.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { ViolationEvent } from '../report/event';
import { EVENT_FILE, readEventFile } from '../report/files';
import type { ProcessGuardStats } from './process-stats';

export interface RunReport {
  dir: string;
  violations: ViolationEvent[];
  processes: ProcessGuardStats[];
  /** Processes whose runner had shown the run's results (markResultsShown) before they ended. */
  resultsShown: number[];
}

const RESULTS_SHOWN = /^results-shown-(\d+)$/;

/**
 * The runner in this process has shown the run's results (Jest's
 * onRunComplete): a death of this process after that (at exit) took no
 * results with it, and the reports it gave its tests were shown.
 */
export function markResultsShown(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, `results-shown-${process.pid}`), '');
  } catch {
    // the directory went: nobody will ask
  }
}

/**
 * A fresh directory for one run: inside `parent` when one was given (kept
 * for `mate report`), else a temporary one.
 */
export function createReportDir(runner: string, parent?: string): string {
  if (parent === undefined) return fs.mkdtempSync(path.join(os.tmpdir(), `mate-guard-${runner}-`));
  fs.mkdirSync(parent, { recursive: true });
  return fs.mkdtempSync(path.join(path.resolve(parent), `${runner}-${new Date().toISOString().replace(/[:.]/g, '-')}-`));
}

/** What a run's directory says about the run (`run.json`): read by the report printer and `mate report`. */
export interface RunInfo {
  tool: 'mate-guard';
  runner: string;
  pid: number;
  started: string;
  /** The run's suppressions file (absolute), for the printer of a dying process. */
  suppressions: string | null;
}

const RUN_INFO = 'run.json';

export function writeRunInfo(dir: string, info: Omit<RunInfo, 'tool'>): void {
  fs.writeFileSync(path.join(dir, RUN_INFO), JSON.stringify({ tool: 'mate-guard', ...info }) + '\n');
}

export function readRunInfo(dir: string): RunInfo | undefined {
  const info = readJson<RunInfo>(path.join(dir, RUN_INFO));
  return info?.tool === 'mate-guard' ? info : undefined;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readReportDir(dir: string): RunReport {
  const report: RunReport = { dir, violations: [], processes: [], resultsShown: [] };
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return report;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    if (EVENT_FILE.test(name)) {
      const v = readEventFile(file);
      if (v) report.violations.push(v);
    } else if (/^stats-\d+-\d+\.json$/.test(name)) {
      const s = readJson<ProcessGuardStats>(file);
      if (s) report.processes.push(s);
    } else if (RESULTS_SHOWN.test(name)) {
      report.resultsShown.push(Number(RESULTS_SHOWN.exec(name)![1]));
    }
  }
  return report;
}
