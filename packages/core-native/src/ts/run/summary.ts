// The run's closing lines: one summary line and, when anything ran
// unguarded, one warning.
import type { ViolationEvent } from '../report/event';
import { isDeathOutsideGuardedMemory, notCountedAsViolation } from '../report/notices';
import type { RunReport, UnreadableFile } from './report-dir';
import type { ProcessGuardStats } from './process-stats';
import type { NativeUnguardedBy } from '../install/native';
import { addNativeSites, formatNativeSites, type NativeSiteSummary } from './native-sites';
import { visible } from '../text/escape';

const noNativeUnguarded = (): NativeUnguardedBy => ({ sampledOut: 0, reentrant: 0, noSlot: 0, libcBlocks: 0 });

function addNative(into: NativeUnguardedBy, from: NativeUnguardedBy | undefined): void {
  if (!from) return;
  into.sampledOut += from.sampledOut;
  into.reentrant += from.reentrant;
  into.noSlot += from.noSlot;
  into.libcBlocks += from.libcBlocks;
}

const count = (into: Record<string, number>, key: string, n: number) => {
  if (n > 0) into[key] = (into[key] ?? 0) + n;
};

/** A process's fallbacks by reason (a process that wrote only its last reason: all of them under it). */
function fallbacksByReason(
  p: Pick<ProcessGuardStats, 'fallbacks' | 'fallbackReason' | 'fallbackReasons'>,
  into: Record<string, number>,
): void {
  const reasons = p.fallbackReasons ?? (p.fallbackReason ? { [p.fallbackReason]: p.fallbacks } : {});
  let known = 0;
  for (const [reason, n] of Object.entries(reasons)) {
    count(into, `because ${reason}`, n);
    known += n;
  }
  count(into, 'for a reason its process did not record', p.fallbacks - known);
}

const PASS_THROUGH_KIND: Record<string, string> = {
  resizable: 'resizable',
  shared: 'shared',
  subclass: 'subclassed',
  tooLarge: 'too large',
};

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
  /** Deaths outside guarded memory (reported, not violations: the program's own exit status tells). */
  deathsOutside: number;
  /** Guarded device allocations shared with another process (CUDA IPC). */
  sharedIpc: number;
  skippedByTag: number;
  passThrough: number;
  /** Native heap: allocation calls of the chosen modules (reallocs included) guarded, and those that went to libc. */
  nativeGuarded: number;
  nativeUnguarded: number;
  /** Why native allocation calls went to libc, each counted. */
  nativeUnguardedBy: NativeUnguardedBy;
  /** Site-aware sampling's call sites and their coverage (absent when it was off everywhere). */
  nativeSites?: NativeSiteSummary;
  /** Why allocations ran unguarded (`because <reason>`, `<kind> buffers, which can't be guarded`), each with its count. */
  unguardedBy: Record<string, number>;
  /** Why CUDA launch tracking was off, in processes that guarded device memory. */
  trackingOff: string[];
}

export function summarize(report: RunReport, extraSkippedByTag = 0): SummaryCounts {
  const unreadable = report.unreadable.filter((u) => u.holds === 'report').length;
  const s: SummaryCounts = {
    allocations: 0,
    peakLive: 0,
    fallbacks: 0,
    violations: report.violations.filter((v) => !v.suppressed && !notCountedAsViolation(v)).length + unreadable,
    unreadable,
    suppressed: report.violations.filter((v) => v.suppressed).length,
    died: new Set(report.violations.filter((v) => v.fatal).map((v) => v.pid)).size,
    unfinished: 0,
    outOfMemory: 0,
    deathsOutside: report.violations.filter((v) => !v.suppressed && isDeathOutsideGuardedMemory(v)).length,
    sharedIpc: 0,
    skippedByTag: extraSkippedByTag,
    passThrough: 0,
    nativeGuarded: 0,
    nativeUnguarded: 0,
    nativeUnguardedBy: noNativeUnguarded(),
    unguardedBy: {},
    trackingOff: [],
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
    // A forked child's counters are its parent's copy: counted once, there.
    if (!v.fatal || v.death?.forked) continue;
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
    // A death's event carries counts, not reasons.
    count(s.unguardedBy, 'for a reason its process did not record (it died)', d.fallbacks);
    s.nativeGuarded += d.nativeAllocations ?? 0;
    s.nativeUnguarded += d.nativeUnguarded ?? 0;
  }
  // Out-of-memory failures: each process's count (its stats at exit), or
  // its one report where it wrote none.
  const oom = new Map<number, number>();
  for (const v of report.violations)
    if (v.kind === 'out-of-memory') oom.set(v.pid, Math.max(oom.get(v.pid) ?? 0, v.memory?.failures ?? 1));
  for (const p of byPid.values())
    if (p.device?.outOfMemory) oom.set(p.pid, Math.max(oom.get(p.pid) ?? 0, p.device.outOfMemory));
  for (const n of oom.values()) s.outOfMemory += n;
  for (const p of byPid.values()) {
    if (p.exited === false && !dead.has(p.pid)) s.unfinished++;
    s.allocations += p.allocations;
    s.peakLive = Math.max(s.peakLive, p.peakLive);
    s.fallbacks += p.fallbacks;
    s.sharedIpc += p.device?.sharedIpc ?? 0;
    s.nativeGuarded += p.nativeAllocations ?? 0;
    s.nativeUnguarded += p.nativeUnguarded ?? 0;
    addNative(s.nativeUnguardedBy, p.nativeUnguardedBy);
    s.nativeSites = addNativeSites(s.nativeSites, p.nativeSites);
    fallbacksByReason(p, s.unguardedBy);
    const off = p.device?.launchTracking === false ? (p.device.trackingOff ?? '') : undefined;
    if (off !== undefined && !s.trackingOff.includes(off)) s.trackingOff.push(off);
  }
  for (const p of report.processes) {
    s.skippedByTag += p.skippedByTag;
    const pt = p.passThrough;
    if (pt) {
      s.passThrough += pt.resizable + pt.shared + pt.subclass + pt.tooLarge;
      for (const [kind, n] of Object.entries(pt))
        count(s.unguardedBy, `${PASS_THROUGH_KIND[kind] ?? kind} buffers, which can't be guarded`, n);
    }
  }
  return s;
}

/** Several runs' counts as one (`mate report`: shards, workers, runs). */
export function mergeSummaries(list: readonly SummaryCounts[]): SummaryCounts {
  const out: SummaryCounts = {
    allocations: 0,
    peakLive: 0,
    fallbacks: 0,
    violations: 0,
    unreadable: 0,
    suppressed: 0,
    died: 0,
    unfinished: 0,
    outOfMemory: 0,
    deathsOutside: 0,
    sharedIpc: 0,
    skippedByTag: 0,
    passThrough: 0,
    nativeGuarded: 0,
    nativeUnguarded: 0,
    nativeUnguardedBy: noNativeUnguarded(),
    unguardedBy: {},
    trackingOff: [],
  };
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
    out.deathsOutside += s.deathsOutside ?? 0;
    out.sharedIpc += s.sharedIpc ?? 0;
    out.skippedByTag += s.skippedByTag;
    out.passThrough += s.passThrough;
    out.nativeGuarded += s.nativeGuarded;
    out.nativeUnguarded += s.nativeUnguarded;
    addNative(out.nativeUnguardedBy, s.nativeUnguardedBy);
    out.nativeSites = addNativeSites(out.nativeSites, s.nativeSites);
    for (const [why, n] of Object.entries(s.unguardedBy ?? {})) count(out.unguardedBy, why, n);
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
  return (
    out +
    formatOutOfMemoryLine(s.outOfMemory) +
    formatDeathsOutsideLine(s.deathsOutside) +
    formatSharedIpcLine(s.sharedIpc) +
    formatUnfinished(s.unfinished) +
    formatNativeCoverage(s) +
    formatNativeSites(s.nativeSites) +
    formatUnguardedWarning(s.fallbacks + s.passThrough, s.unguardedBy) +
    formatTrackingOffWarning(s.trackingOff)
  );
}

/** Out-of-memory failures ('' when none): they are the program's failures, not memory bugs. */
function formatOutOfMemoryLine(n: number): string {
  return n > 0
    ? `[mate-guard] out of memory: ${plural(n, 'device allocation')} failed for want of GPU memory (the caller got the error; the first in each process is reported: not a memory bug)\n`
    : '';
}

/** Deaths outside guarded memory ('' when none): the program's, not memory bugs mate-guard found. */
function formatDeathsOutsideLine(n: number): string {
  return n > 0
    ? `[mate-guard] ${plural(n, 'death')} that ${n === 1 ? 'names' : 'name'} no guarded allocation (reported above): not counted as ${n === 1 ? 'a violation' : 'violations'}; the program's own exit status tells whether ${n === 1 ? 'it' : 'they'} failed the run\n`
    : '';
}

/** Guarded device allocations another process mapped ('' when none): guarded there too, never reused here. */
function formatSharedIpcLine(n: number): string {
  return n > 0
    ? `[mate-guard] CUDA IPC: ${plural(n, 'guarded device allocation')} shared with another process (mapped there with ${n === 1 ? 'its' : 'their'} guard; released at free, never reused)\n`
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
  return files
    .map((u) =>
      u.holds === 'report'
        ? `[mate-guard] error: cannot read report file ${visible(u.file)}: ${visible(u.why)}; counted as a violation that could not be read\n`
        : `[mate-guard] warning: cannot read counters file ${visible(u.file)}: ${visible(u.why)}; that process's counts are missing from the summary\n`,
    )
    .join('');
}

/**
 * The native heap's coverage ('' when no chosen module allocated): with
 * sampling (nativeSampleRate), or slots running out, part of the chosen
 * modules' allocation calls went to libc.
 */
export function formatNativeCoverage(
  s: Pick<SummaryCounts, 'nativeGuarded' | 'nativeUnguarded'> & { nativeUnguardedBy?: NativeUnguardedBy },
): string {
  const all = s.nativeGuarded + s.nativeUnguarded;
  if (all === 0) return '';
  const pct = (100 * s.nativeGuarded) / all;
  const shown = pct === 100 || pct === 0 ? `${pct}` : pct >= 99.95 ? '>99.9' : pct < 0.05 ? '<0.1' : pct.toFixed(1);
  return `[mate-guard] native heap: ${s.nativeGuarded} of ${plural(all, 'allocation')} of the chosen modules guarded (${shown}%)${s.nativeUnguarded ? `, ${s.nativeUnguarded} went to libc (${nativeWhy(s.nativeUnguarded, s.nativeUnguardedBy)})` : ''}
`;
}

/** Why native allocation calls went to libc, each with its count. */
function nativeWhy(total: number, by: NativeUnguardedBy | undefined): string {
  const parts: string[] = [];
  // Counters from a mate-guard that kept no reasons: the old words.
  if (!by || by.sampledOut + by.noSlot + by.libcBlocks + by.reentrant === 0) return 'sampled out, or no slot';
  if (by.sampledOut) parts.push(`${by.sampledOut} sampled out`);
  if (by.noSlot) parts.push(`${by.noSlot} got no slot`);
  if (by.libcBlocks) parts.push(`${plural(by.libcBlocks, 'realloc')} of blocks libc made`);
  if (by.reentrant) parts.push(`${by.reentrant} made while mate-guard captured a stack`);
  const rest = total - by.sampledOut - by.noSlot - by.libcBlocks - by.reentrant;
  if (rest > 0) parts.push(`${rest} for a reason its process did not record`);
  return parts.join(', ');
}

/** The one warning that CUDA launch tracking was off ('' when it ran, or no device was guarded). */
export function formatTrackingOffWarning(reasons: readonly string[]): string {
  // '' stands for "turned off on purpose" (trackLaunches: false): no warning.
  const why = reasons.filter((r) => r !== '');
  return why.length > 0
    ? `[mate-guard] warning: CUDA launch tracking was off: ${why.map(visible).join('; ')}; illegal-address reports name no kernel and cross-stream frees go unchecked\n`
    : '';
}

/** The one warning about allocations that ran unguarded, each reason with its count ('' when none did). */
export function formatUnguardedWarning(total: number, by: Readonly<Record<string, number>>): string {
  if (total <= 0) return '';
  const parts = Object.entries(by)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${n} ${visible(why)}`);
  return `[mate-guard] warning: ${plural(total, 'allocation')} ran unguarded: ${parts.length ? parts.join('; ') : 'for reasons not recorded'}\n`;
}

/**
 * The one line for a run asked to guard in which no process installed the
 * guard (no counters, no report): `fix` says how to load it for this runner.
 */
export function formatNothingGuarded(fix: string): string {
  return `[mate-guard] warning: guarding was asked for, but no test process was guarded (nothing installed the guard allocator): ${fix}\n`;
}
