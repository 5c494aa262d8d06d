// Plain `jest` with the environment but without the reporter: every file
// is guarded, but nobody owns the run, so no summary line would ever say
// so. The first guarded file of the run says it once instead: guarding is
// on, and the summary (and crashed tests' names) come from the reporter.
import * as fs from 'node:fs';
import * as net from 'node:net';

import { runsAlone } from '@mate-guard/core/internal';

export const OWNERLESS_NOTE =
  "[mate-guard] guarding is on (@mate-guard/jest-env); the summary line and the names of tests whose worker a guard fault killed come from the reporter: add reporters: ['default', '@mate-guard/jest-env/reporter'] to your Jest config, or run mate-jest\n";

let announced = false;

/** The Jest process that runs this one: the parent of a worker process, else itself (in band, worker threads). */
function jestMainPid(): number {
  return /jest-worker[\\/]build[\\/](?:workers[\\/])?processChild\.js$/.test(process.argv[1] ?? '')
    ? process.ppid
    : process.pid;
}

/**
 * One claim per Jest run (its main process: pid and start time), made by
 * whichever worker gets there first; the others stay quiet. The claim is
 * an abstract socket name (Linux), held while the claiming process lives:
 * it leaves no file behind. Where there are no abstract sockets each
 * process says it.
 */
function claimRun(said: () => void): void {
  const pid = jestMainPid();
  let started = '';
  try {
    // Field 22 of /proc/<pid>/stat, after the command's parenthesis: the process's start time.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    // no /proc: the pid alone
  }
  const claim = net.createServer();
  claim.once('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE') said(); // no abstract sockets here: say it
  });
  claim.listen({ path: `\0mate-guard-${process.getuid?.() ?? ''}-jest-run-${pid}-${started}` }, () => {
    claim.unref();
    said();
  });
}

/** Says once per run that the run has no owner, when that is so. */
export function announceOwnerless(): void {
  if (announced) return;
  announced = true;
  let alone: boolean;
  try {
    alone = runsAlone(); // else the reporter, mate-jest or guard-run owns the run
  } catch {
    return; // a broken handoff is reported where it is read for settings
  }
  if (alone) claimRun(() => process.stderr.write(OWNERLESS_NOTE));
}
