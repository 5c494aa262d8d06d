// The summary's line about site-aware sampling (nativeSiteFirst): how many
// call sites of the chosen modules were seen and whether each one had its
// first K calls guarded, summed over the run's processes.
import type { NativeSiteCounts } from '../install/native';

export interface NativeSiteSummary {
  /** K (the smallest, if processes differed). */
  first: number;
  /** Processes that counted sites: a site is counted once in each. */
  processes: number;
  seen: number;
  reachedFirst: number;
  missed: number;
  untrackedCalls: number;
}

/** Adds one process's (or one run's) counts; `into` undefined starts a new summary. */
export function addNativeSites(
  into: NativeSiteSummary | undefined,
  from: NativeSiteCounts | NativeSiteSummary | undefined,
): NativeSiteSummary | undefined {
  // A process whose chosen modules made no allocation call (npx, a runner's main process) counts nothing.
  if (!from || (from.seen === 0 && from.untrackedCalls === 0)) return into;
  const processes = 'processes' in from ? from.processes : 1;
  if (!into)
    return {
      first: from.first,
      processes,
      seen: from.seen,
      reachedFirst: from.reachedFirst,
      missed: from.missed,
      untrackedCalls: from.untrackedCalls,
    };
  into.first = Math.min(into.first, from.first);
  into.processes += processes;
  into.seen += from.seen;
  into.reachedFirst += from.reachedFirst;
  into.missed += from.missed;
  into.untrackedCalls += from.untrackedCalls;
  return into;
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/** `[mate-guard] native heap: S call sites, all guarded at least K times` ('' when site-aware sampling was off). */
export function formatNativeSites(s: NativeSiteSummary | undefined): string {
  if (!s || (s.seen === 0 && s.untrackedCalls === 0)) return '';
  const k = s.first;
  const fewer = s.seen - s.reachedFirst;
  let text = plural(s.seen, 'call site');
  if (s.missed === 0) {
    text +=
      fewer === 0
        ? `, all guarded at least ${plural(k, 'time')}`
        : s.reachedFirst === 0
          ? `, all guarded on every call (each called fewer than ${plural(k, 'time')})`
          : `, all covered: ${s.reachedFirst} guarded at least ${plural(k, 'time')}, ${fewer} on every call (called fewer times)`;
  } else {
    text +=
      `, ${s.seen - s.missed} covered (guarded at least ${plural(k, 'time')}, or on every call), ` +
      `${s.missed} not (one of ${s.missed === 1 ? 'its' : 'their'} first ${plural(k, 'call')} got no guarded slot)`;
  }
  if (s.processes > 1) text += ` (counted in each of ${s.processes} processes)`;
  if (s.untrackedCalls > 0)
    text += `; the site table was full: ${plural(s.untrackedCalls, 'call')} from sites past it were sampled plainly`;
  return `[mate-guard] native heap: ${text}\n`;
}
