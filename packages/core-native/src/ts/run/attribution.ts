// What a run's owner prints for a process that died (a guard fault, a
// deadly signal, an uncaught C++ exception): the runners themselves name
// no test (Mocha --parallel names nothing at all). The dying process
// printed the full report already. Which test a crash is put on is
// decided here, for every plugin.
import type { ViolationEvent } from '../report/event';
import { signalName } from '../report/format';

/**
 * Whether a fatal event is a crash of a process the runner started (a
 * worker, the runner itself), not of a child the program forked without
 * exec to watch it die: only those are put on a test as crashes.
 */
export function workerCrash(event: ViolationEvent): boolean {
  return event.fatal && event.death?.forked !== true;
}

/**
 * The test path a crash is put on: the test that was running, else (a
 * fault outside any test: an afterAll hook, a timer) the test that made the
 * damaged allocation; null: neither is known.
 */
export function crashTest(event: ViolationEvent): string | null {
  return event.test ?? event.allocation?.allocTest ?? null;
}

/**
 * Whether a crash belongs to a test file: `file` as test paths begin,
 * `[project] path/to/file` where the runner's project has a name
 * (formatTestPath(rel, [], project)).
 */
export function crashInFile(event: ViolationEvent, file: string): boolean {
  const t = crashTest(event);
  return t !== null && (t === file || t.startsWith(`${file} > `));
}

/** A crash's test path in parts: its file (as the path begins, project included) and its titles, the last the test's own. */
export function crashTitles(event: ViolationEvent): { file: string | undefined; titles: string[] } {
  const t = crashTest(event);
  if (t === null) return { file: undefined, titles: [] };
  const [file, ...titles] = t.split(' > ');
  return { file, titles };
}

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
  const made = event.allocation?.allocTest;
  // Outside any test, the crash is put on the test that made the allocation (crashTest): said so.
  const where = event.test ? `while running ${event.test}` : made ? `outside any test (allocated in ${made})` : 'outside any test';
  if (event.death) {
    return `[mate-guard] ${processLabel} ${event.pid} died of ${deathCause(event)}: ${event.kind} ${where}; full report above, JSON in ${event.file}\n`;
  }
  const a = event.allocation;
  const what = a ? `allocation #${a.id} (${a.size} bytes, ${a.mode} mode)` : 'no allocation';
  return `[mate-guard] ${processLabel} ${event.pid} was killed by a guard fault: ${event.kind} on ${what} ${where}; full report above, JSON in ${event.file}\n`;
}
