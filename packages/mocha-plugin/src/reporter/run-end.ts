// The end of a guarded run in plain mocha's main process: name the test of
// any worker a guard fault killed (Mocha says nothing and may even exit 0),
// print the summary line, and make the exit code tell the truth. mate-mocha
// does the same from outside instead.
import { flushGuardStats, type GuardedRun } from '@mate-guard/core/internal';

import type { MochaRunner } from './runner-hook';

/** Run at 'exit', after core's own exit check (registered earlier). Exit handlers may still set process.exitCode. */
export function finishRunAtExit(run: GuardedRun): void {
  process.on('exit', () => {
    flushGuardStats(); // no-op unless the allocator is installed here (serial)
    // Serial: a fault would have killed this process before 'exit'.
    const { text, exitCode } = run.finish({ status: Number(process.exitCode ?? 0), attribution: { label: () => 'mocha worker', earlier: true } });
    process.stderr.write(text);
    process.exitCode = exitCode;
  });
}

/**
 * Watch mode: the end of every rerun (after the reporter's own closing
 * lines) says what that rerun found; the process lives on.
 */
export function finishEachRun(runner: MochaRunner, run: GuardedRun): void {
  runner.once('end', () => {
    flushGuardStats();
    const { text } = run.finish({ status: runner.failures > 0 ? 1 : 0, attribution: { label: () => 'mocha worker' }, more: true });
    process.stderr.write(text);
  });
}
