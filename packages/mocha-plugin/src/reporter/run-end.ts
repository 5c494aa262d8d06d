// The end of a guarded run in plain mocha's main process: name the test of
// any worker a guard fault killed (Mocha says nothing and may even exit 0),
// print the summary line, and make the exit code tell the truth (core's
// verdict, as process.exitCode). mate-mocha does the same from outside instead.
import { endRound, endRunAtExit as endAtExit, type GuardedRun } from '@mate-guard/core/internal';

import type { MochaRunner } from './runner-hook';

/** At 'exit' (serial: a fault would have killed this process before). */
export function endRunAtExit(run: GuardedRun): void {
  endAtExit(run, { attribution: { label: () => 'mocha worker', earlier: true } });
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
