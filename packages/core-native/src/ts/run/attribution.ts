// What a run's owner prints for a process that died (a guard fault, a
// deadly signal, an uncaught C++ exception): the runners themselves name
// no test (Mocha --parallel names nothing at all). The dying process
// printed the full report already. Which test a crash is put on is
// decided here, for every plugin.
import type { ViolationEvent } from '../report/event';
import { signalName } from '../report/format';
import type * as Render from '../report/render';

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
function crashTitles(event: ViolationEvent): { file: string | undefined; titles: string[] } {
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

/** The test title a plugin reports a crash outside any test under. */
function crashOutsideTestTitle(event: ViolationEvent): string {
  return event.death ? '[mate-guard] process died outside any test' : '[mate-guard] guard fault outside any test';
}

/** One `[mate-guard]` line; `processLabel` is e.g. `mocha worker`. */
export function formatCrashAttribution(event: ViolationEvent, processLabel: string): string {
  const made = event.allocation?.allocTest;
  // Outside any test, the crash is put on the test that made the allocation (crashTest): said so.
  const where = event.test
    ? `while running ${event.test}`
    : made
      ? `outside any test (allocated in ${made})`
      : 'outside any test';
  if (event.death) {
    return `[mate-guard] ${processLabel} ${event.pid} died of ${deathCause(event)}: ${event.kind} ${where}; full report above, JSON in ${event.file}\n`;
  }
  const a = event.allocation;
  const what = a ? `allocation #${a.id} (${a.size} bytes, ${a.mode} mode)` : 'no allocation';
  return `[mate-guard] ${processLabel} ${event.pid} was killed by a guard fault: ${event.kind} on ${what} ${where}; full report above, JSON in ${event.file}\n`;
}

/** How a crash becomes a failed test, for every runner: where it is put, the error's name, and its message. */
export interface CrashFailure {
  /** The test path it is put on: the crashed test's, else `<file> > <outside title>`. */
  test: string;
  /** The test file as the path begins (a project's name included); undefined when no test is known. */
  file: string | undefined;
  /** The suites around it, outermost first. */
  suites: string[];
  /** The test's own title, or the outside-any-test title. */
  title: string;
  /** The error's name: a guard fault, or any other death. */
  name: 'GuardFaultError' | 'ProcessDiedError';
  /** The report first (JUnit and other reporters show a failure's first lines), then the attribution line and what did not run. */
  message: string;
  /** The one `[mate-guard]` line the run's owner prints for it. */
  line: string;
}

/**
 * The failure a runner reports for a crash (the one message builder
 * around the one attribution decision, crashTest): `label` names the dead
 * process (`Jest worker`), `rest` the file whose remaining tests did not
 * run, as the runner names it (default: the crashed test's file), `died`
 * what died (`worker`, `process`).
 */
export function crashFailure(event: ViolationEvent, label: string, rest?: string, died = 'worker'): CrashFailure {
  const { file, titles } = crashTitles(event);
  const where = rest ?? file ?? '(unknown file)';
  const own = titles.pop();
  const title = own ?? crashOutsideTestTitle(event);
  const line = formatCrashAttribution(event, label).trimEnd();
  // The renderer loads with the first report, not with the runner (install.ts says why).
  const { reportText } = require('../report/render') as typeof Render;
  return {
    test: crashTest(event) ?? `${where} > ${title}`,
    file,
    suites: titles,
    title,
    name: event.death ? 'ProcessDiedError' : 'GuardFaultError',
    message: `${reportText(event)}${line}\nThe ${died} died, so the rest of ${where} did not run.`,
    line,
  };
}
