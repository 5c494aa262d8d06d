// The runner's main process side: a report directory per run, shared with
// every worker through MATE_GUARD_REPORT_DIR, read back after the run for
// crash attribution and the summary line.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { ProcessGuardStats } from './run-stats';

/** A violation as written by the process that found it. */
export interface ViolationEvent {
  kind: string;
  access: string | null;
  address: string | null;
  fatal: boolean;
  signal: number | null;
  pid: number;
  test: string | null;
  allocation: { id: number; size: number; start: string; end: string; mode: string; backend: string };
  /** The process's counters when the violation was found. */
  process?: { allocations: number; peakLive: number; fallbacks: number };
  text: string;
  file: string;
}

export interface RunReport {
  dir: string;
  violations: ViolationEvent[];
  processes: ProcessGuardStats[];
}

export const REPORT_DIR_ENV = 'MATE_GUARD_REPORT_DIR';
/** Set for processes whose run prints the summary (runner plugins, guard-run). */
export const RUN_SUMMARY_ENV = 'MATE_GUARD_RUN_SUMMARY';

/** A fresh directory for one run; exported to workers through the env. */
export function createRunReportDir(runner: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mate-guard-${runner}-`));
  env[REPORT_DIR_ENV] = dir;
  env[RUN_SUMMARY_ENV] = '1';
  return dir;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readRunReport(dir: string): RunReport {
  const report: RunReport = { dir, violations: [], processes: [] };
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return report;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    if (/^mate-guard-\d+-\d+\.json$/.test(name)) {
      const v = readJson<ViolationEvent>(file);
      if (v) report.violations.push({ ...v, file });
    } else if (/^stats-\d+-\d+\.json$/.test(name)) {
      const s = readJson<ProcessGuardStats>(file);
      if (s) report.processes.push(s);
    }
  }
  return report;
}

/** Violations that ended their process: the runner can't name their test. */
export function fatalViolations(report: RunReport): ViolationEvent[] {
  return report.violations.filter((v) => v.fatal);
}

export interface SummaryCounts {
  allocations: number;
  peakLive: number;
  fallbacks: number;
  violations: number;
  skippedByTag: number;
  passThrough: number;
  reasons: string[];
}

export function summarize(report: RunReport, extraSkippedByTag = 0): SummaryCounts {
  const s: SummaryCounts = {
    allocations: 0, peakLive: 0, fallbacks: 0, violations: report.violations.length,
    skippedByTag: extraSkippedByTag, passThrough: 0, reasons: [],
  };
  // A process that died by a fault wrote no counters: its report has them.
  const counted = new Set(report.processes.map((p) => p.pid));
  for (const v of report.violations) {
    if (!v.fatal || !v.process || counted.has(v.pid)) continue;
    counted.add(v.pid);
    s.allocations += v.process.allocations;
    s.peakLive = Math.max(s.peakLive, v.process.peakLive);
    s.fallbacks += v.process.fallbacks;
  }
  // The allocator is one per process (its counters are process-wide);
  // tag skips and pass-throughs are counted per thread.
  const byPid = new Map<number, ProcessGuardStats>();
  for (const p of report.processes) {
    const seen = byPid.get(p.pid);
    if (!seen || p.allocations > seen.allocations) byPid.set(p.pid, p);
  }
  for (const p of byPid.values()) {
    s.allocations += p.allocations;
    s.peakLive = Math.max(s.peakLive, p.peakLive);
    s.fallbacks += p.fallbacks;
    if (p.fallbackReason && !s.reasons.includes(p.fallbackReason)) s.reasons.push(p.fallbackReason);
  }
  for (const p of report.processes) {
    s.skippedByTag += p.skippedByTag;
    const pt = p.passThrough;
    if (pt) {
      s.passThrough += pt.resizable + pt.shared + pt.subclass + pt.tooLarge;
      const kinds = Object.entries(pt).filter(([, n]) => n > 0).map(([k]) => k);
      if (kinds.length) {
        const why = `${kinds.join('/')} buffers can't be guarded`;
        if (!s.reasons.includes(why)) s.reasons.push(why);
      }
    }
  }
  return s;
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/** The run's closing lines: the summary, and one warning if anything went unguarded. */
export function formatSummary(s: SummaryCounts): string {
  let out =
    `[mate-guard] summary: ${plural(s.allocations, 'allocation')} guarded, peak live ${s.peakLive}, ` +
    `${plural(s.fallbacks, 'unguarded fallback')}, ${plural(s.violations, 'violation')}, ` +
    `${plural(s.skippedByTag, 'test')} skipped by tag\n`;
  return out + formatUnguardedWarning(s.fallbacks + s.passThrough, s.reasons);
}

/** The one warning about allocations that ran unguarded ('' when none did). */
export function formatUnguardedWarning(count: number, reasons: readonly string[]): string {
  return count > 0 ? `[mate-guard] warning: ${plural(count, 'allocation')} ran unguarded: ${reasons.join('; ')}\n` : '';
}

/** Removes the directory unless it holds violations worth keeping. */
export function finishRunReportDir(report: RunReport): void {
  if (report.violations.length === 0) fs.rmSync(report.dir, { recursive: true, force: true });
}
