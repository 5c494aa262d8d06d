// What a run's owner prints for a process that a guard fault killed: the
// runners themselves name no test (Mocha --parallel names nothing at all).
// The dying process printed the full report already.
import type { ViolationEvent } from '../report/event';

/** One `[mate-guard]` line; `processLabel` is e.g. `mocha worker`. */
export function formatCrashAttribution(event: ViolationEvent, processLabel: string): string {
  const where = event.test ? `while running ${event.test}` : 'outside any test';
  const a = event.allocation;
  const what = a ? `allocation #${a.id} (${a.size} bytes, ${a.mode} mode)` : 'no allocation';
  return `[mate-guard] ${processLabel} ${event.pid} was killed by a guard fault: ${event.kind} on ${what} ${where}; full report above, JSON in ${event.file}\n`;
}
