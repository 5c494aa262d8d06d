// The end of a guarded run in plain mocha's main process: name the test of
// any worker a guard fault killed (Mocha says nothing and may even exit 0),
// print the summary line, and make the exit code tell the truth (core's
// verdict, as process.exitCode). mate-mocha does the same from outside instead.
import { endRound, endRunAtExit as endAtExit, type GuardedRun } from '@mate-guard/core/internal';

import { onEveryRun, type MochaRunner } from './runner-hook';

/** At 'exit' (serial: a fault would have killed this process before). */
export function endRunAtExit(run: GuardedRun): void {
  const verdict = endAtExit(run, { attribution: { label: () => 'mocha worker', earlier: true } });
  // Mocha without --exit sets the exit code to its failure count in an
  // 'exit' listener it adds when the run ends, after core's: a failing
  // verdict on a passed run (a report file that could not be read, damage
  // found at exit) is put back after it.
  onEveryRun((runner) =>
    runner.once('end', () =>
      setImmediate(() =>
        process.on('exit', () => {
          const v = verdict();
          if (v && v.exitCode !== 0 && Number(process.exitCode ?? 0) === 0) process.exitCode = v.exitCode;
        }),
      ),
    ),
  );
}

/**
 * Watch mode: the end of every rerun (after the reporter's own closing
 * lines) says what that rerun found; the process lives on.
 */
export function endEachRun(runner: MochaRunner, run: GuardedRun): void {
  runner.once('end', () => {
    endRound(run, runner.failures > 0 ? 1 : 0, { attribution: { label: () => 'mocha worker' } });
  });
}
