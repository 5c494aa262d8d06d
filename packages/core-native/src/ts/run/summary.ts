// The run's closing lines: one summary line and, when anything ran
// unguarded, one warning.
import type { ViolationEvent } from '../report/event';
import { isNotice } from '../report/notices';
import type { RunReport, UnreadableFile } from './report-dir';
import type { ProcessGuardStats } from './process-stats';

export interface SummaryCounts {
  allocations: number;
  peakLive: number;
  fallbacks: number;
  /** Not suppressed: these fail the run (report files that could not be read included). */
  violations: number;
  /** Report files that could not be read: each counted as a violation. */
  unreadable: number;
  suppressed: number;
  /** Processes a guard fault killed (each left one fatal event). */
  died: number;
  /** Guarded processes that ended without writing their counters at exit (killed: a time limit, SIGKILL). */
  unfinished: number;
  /** Device allocations that failed for want of GPU memory (out-of-memory reports: not violations). */
  outOfMemory: number;
  skippedByTag: number;
  passThrough: number;
  /** Native heap: allocation calls of the chosen modules (reallocs included) guarded, and those that went to libc. */
  nativeGuarded: number;
  nativeUnguarded: number;
  reasons: string[];
  /** Why CUDA launch tracking was off, in processes that guarded device memory. */
  trackingOff: string[];
}

export function summarize(report: RunReport, extraSkippedByTag = 0): SummaryCounts {
  const unreadable = report.unreadable.filter((u) => u.holds === 'report').length;
  const s: SummaryCounts = {
    allocations: 0, peakLive: 0, fallbacks: 0,
    violations: report.violations.filter((v) => !v.suppressed && !isNotice(v)).length + unreadable,
    unreadable,
    suppressed: report.violations.filter((v) => v.suppressed).length,
    died: new Set(report.violations.filter((v) => v.fatal).map((v) => v.pid)).size,
    unfinished: 0,
    outOfMemory: 0,
    skippedByTag: extraSkippedByTag, passThrough: 0, nativeGuarded: 0, nativeUnguarded: 0, reasons: [], trackingOff: [],
  };
  // The allocator is one per process (its counters are process-wide);
  // tag skips and pass-throughs are counted per thread.
  const byPid = new Map<number, ProcessGuardStats>();
  for (const p of report.processes) {
    const seen = byPid.get(p.pid);
    if (!seen || p.allocations > seen.allocations) byPid.set(p.pid, p);
  }
  // A process that died wrote no counters at exit (or only earlier ones,
  // flushed after a test file): its death's report has the last word.
  const dead = new Map<number, ViolationEvent['process']>();
  for (const v of report.violations) {
    if (!v.fatal) continue;
    const seen = dead.get(v.pid);
    if (!seen || v.process.allocations > seen.allocations) dead.set(v.pid, v.process);
  }
  for (const [pid, d] of dead) {
    const p = byPid.get(pid);
    if (p && p.allocations >= d.allocations) continue;
    if (p) byPid.delete(pid);
    s.allocations += d.allocations;
    s.peakLive = Math.max(s.peakLive, d.peakLive);
    s.fallbacks += d.fallbacks;
    s.nativeGuarded += d.nativeAllocations ?? 0;
    s.nativeUnguarded += d.nativeUnguarded ?? 0;
  }
  // Out-of-memory failures: each process's count (its stats at exit), or
  // its one report where it wrote none.
  const oom = new Map<number, number>();
  for (const v of report.violations) if (v.kind === 'out-of-memory') oom.set(v.pid, Math.max(oom.get(v.pid) ?? 0, v.memory?.failures ?? 1));
  for (const p of byPid.values()) if (p.device?.outOfMemory) oom.set(p.pid, Math.max(oom.get(p.pid) ?? 0, p.device.outOfMemory));
  for (const n of oom.values()) s.outOfMemory += n;
  for (const p of byPid.values()) {
    if (p.exited === false && !dead.has(p.pid)) s.unfinished++;
    s.allocations += p.allocations;
    s.peakLive = Math.max(s.peakLive, p.peakLive);
    s.fallbacks += p.fallbacks;
    s.nativeGuarded += p.nativeAllocations ?? 0;
    s.nativeUnguarded += p.nativeUnguarded ?? 0;
    if (p.fallbackReason && !s.reasons.includes(p.fallbackReason)) s.reasons.push(p.fallbackReason);
    const off = p.device?.launchTracking === false ? p.device.trackingOff ?? '' : undefined;
    if (off !== undefined && !s.trackingOff.includes(off)) s.trackingOff.push(off);
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

/** Several runs' counts as one (`mate report`: shards, workers, runs). */
export function mergeSummaries(list: readonly SummaryCounts[]): SummaryCounts {
  const out: SummaryCounts = { allocations: 0, peakLive: 0, fallbacks: 0, violations: 0, unreadable: 0, suppressed: 0, died: 0, unfinished: 0, outOfMemory: 0, skippedByTag: 0, passThrough: 0, nativeGuarded: 0, nativeUnguarded: 0, reasons: [], trackingOff: [] };
  for (const s of list) {
    out.allocations += s.allocations;
    out.peakLive = Math.max(out.peakLive, s.peakLive);
    out.fallbacks += s.fallbacks;
    out.violations += s.violations;
    out.unreadable += s.unreadable;
    out.suppressed += s.suppressed;
    out.died += s.died;
    out.unfinished += s.unfinished;
    out.outOfMemory += s.outOfMemory;
    out.skippedByTag += s.skippedByTag;
    out.passThrough += s.passThrough;
    out.nativeGuarded += s.nativeGuarded;
    out.nativeUnguarded += s.nativeUnguarded;
    for (const r of s.reasons) if (!out.reasons.includes(r)) out.reasons.push(r);
    for (const r of s.trackingOff) if (!out.trackingOff.includes(r)) out.trackingOff.push(r);
  }
  return out;
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

export function formatSummary(s: SummaryCounts): string {
  const out =
    `[mate-guard] summary: ${plural(s.allocations, 'allocation')} guarded, peak live ${s.peakLive}, ` +
    `${plural(s.fallbacks, 'unguarded fallback')}, ${plural(s.violations, 'violation')}${s.unreadable ? ` (${s.unreadable} could not be read)` : ''}, ` +
    (s.suppressed ? `${s.suppressed} suppressed, ` : '') +
    // A process that died was counted up to its death: the line says how many died.
    (s.died ? `${plural(s.died, 'process', 'processes')} died, ` : '') +
    `${plural(s.skippedByTag, 'test')} skipped by tag\n`;
  return out + formatOutOfMemoryLine(s.outOfMemory) + formatUnfinished(s.unfinished) + formatNativeCoverage(s) + formatUnguardedWarning(s.fallbacks + s.passThrough, s.reasons) + formatTrackingOffWarning(s.trackingOff);
}

/** Out-of-memory failures ('' when none): they are the program's failures, not memory bugs. */
function formatOutOfMemoryLine(n: number): string {
  return n > 0
    ? `[mate-guard] out of memory: ${plural(n, 'device allocation')} failed for want of GPU memory (the caller got the error; the first in each process is reported: not a memory bug)\n`
    : '';
}

/** Guarded processes killed before they wrote their counters ('' when none). */
function formatUnfinished(n: number): string {
  return n > 0
    ? `[mate-guard] warning: ${plural(n, 'guarded process', 'guarded processes')} ended without writing ${n === 1 ? 'its' : 'their'} counters at exit (killed: a time limit, SIGKILL); the counts above stop where ${n === 1 ? 'it' : 'they'} last wrote them\n`
    : '';
}

/**
 * One line per file of a run that could not be read, before the summary:
 * a report is counted as a violation (it may hold anything), a counters
 * file leaves its process out of the counts.
 */
export function formatUnreadable(files: readonly UnreadableFile[]): string {
  return files.map((u) => u.holds === 'report'
    ? `[mate-guard] error: cannot read report file ${u.file}: ${u.why}; counted as a violation that could not be read\n`
    : `[mate-guard] warning: cannot read counters file ${u.file}: ${u.why}; that process's counts are missing from the summary\n`).join('');
}

/**
 * The native heap's coverage ('' when no chosen module allocated): with
 * sampling (nativeSampleRate), or slots running out, part of the chosen
 * modules' allocation calls went to libc.
 */
export function formatNativeCoverage(s: Pick<SummaryCounts, 'nativeGuarded' | 'nativeUnguarded'>): string {
  const all = s.nativeGuarded + s.nativeUnguarded;
  if (all === 0) return '';
  const pct = (100 * s.nativeGuarded) / all;
  const shown = pct === 100 || pct === 0 ? `${pct}` : pct >= 99.95 ? '>99.9' : pct < 0.05 ? '<0.1' : pct.toFixed(1);
  return `[mate-guard] native heap: ${s.nativeGuarded} of ${plural(all, 'allocation')} of the chosen modules guarded (${shown}%)${s.nativeUnguarded ? `, ${s.nativeUnguarded} went to libc (sampled out, or no slot)` : ''}
`;
}

/** The one warning that CUDA launch tracking was off ('' when it ran, or no device was guarded). */
export function formatTrackingOffWarning(reasons: readonly string[]): string {
  // '' stands for "turned off on purpose" (trackLaunches: false): no warning.
  const why = reasons.filter((r) => r !== '');
  return why.length > 0
    ? `[mate-guard] warning: CUDA launch tracking was off: ${why.join('; ')}; illegal-address reports name no kernel and cross-stream frees go unchecked\n`
    : '';
}

/** The one warning about allocations that ran unguarded ('' when none did). */
export function formatUnguardedWarning(count: number, reasons: readonly string[]): string {
  return count > 0 ? `[mate-guard] warning: ${plural(count, 'allocation')} ran unguarded: ${reasons.join('; ')}\n` : '';
}

/**
 * The one line for a run asked to guard in which no process installed the
 * guard (no counters, no report): `fix` says how to load it for this runner.
 */
export function formatNothingGuarded(fix: string): string {
  return `[mate-guard] warning: guarding was asked for, but no test process was guarded (nothing installed the guard allocator): ${fix}\n`;
}
