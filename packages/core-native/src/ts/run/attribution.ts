// What a run's owner prints for a process that died (a guard fault, a
// deadly signal, an uncaught C++ exception): the runners themselves name
// no test (Mocha --parallel names nothing at all). The dying process
// printed the full report already.
import type { ViolationEvent } from '../report/event';
import { signalName } from '../report/format';

/** What killed the process, as a phrase: `a guard fault`, `SIGABRT`, `an uncaught C++ exception (std::out_of_range)`. */
export function deathCause(event: ViolationEvent): string {
  const d = event.death;
  if (!d) return 'a guard fault';
  if (event.kind === 'uncaught-exception' && d.exception) return `an uncaught C++ exception (${d.exception.type})`;
  return signalName(d.signal);
}

/** The error name a plugin gives a crashed test's failure: a guard fault, or any other death. */
export function crashErrorName(event: ViolationEvent): 'GuardFaultError' | 'ProcessDiedError' {
  return event.death ? 'ProcessDiedError' : 'GuardFaultError';
}

/** The test title a plugin reports a crash outside any test under. */
export function crashOutsideTestTitle(event: ViolationEvent): string {
  return event.death ? '[mate-guard] process died outside any test' : '[mate-guard] guard fault outside any test';
}

/** One `[mate-guard]` line; `processLabel` is e.g. `mocha worker`. */
export function formatCrashAttribution(event: ViolationEvent, processLabel: string): string {
  const where = event.test ? `while running ${event.test}` : 'outside any test';
  if (event.death) {
    return `[mate-guard] ${processLabel} ${event.pid} died of ${deathCause(event)}: ${event.kind} ${where}; full report above, JSON in ${event.file}\n`;
  }
  const a = event.allocation;
  const what = a ? `allocation #${a.id} (${a.size} bytes, ${a.mode} mode)` : 'no allocation';
  return `[mate-guard] ${processLabel} ${event.pid} was killed by a guard fault: ${event.kind} on ${what} ${where}; full report above, JSON in ${event.file}\n`;
}
