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
}

/** A fresh directory for one run. */
export function createReportDir(runner: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `mate-guard-${runner}-`));
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readReportDir(dir: string): RunReport {
  const report: RunReport = { dir, violations: [], processes: [] };
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
    }
  }
  return report;
}
