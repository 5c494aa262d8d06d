// The end of a guarded run in node --test's main process (or a process that
// ran its tests itself): the test of any process a guard fault killed, the
// summary line, and an exit code that tells the truth. mate-node-test does
// the same from outside instead.
import { flushGuardStats, type GuardedRun } from '@mate-guard/core/internal';

import { NOTHING_GUARDED_FIX } from '../hooks/settings';

export const PROCESS_LABEL = 'node:test process';

/**
 * Run at 'exit', after core's own exit check (registered earlier). Exit
 * handlers may still set process.exitCode. `note` follows the summary.
 */
export function finishRunAtExit(run: GuardedRun, note = ''): void {
  process.on('exit', () => {
    flushGuardStats(); // no-op unless the allocator is installed here
    const { text, exitCode } = run.finish({
      status: Number(process.exitCode ?? 0),
      attribution: { label: () => PROCESS_LABEL, earlier: true },
      nothingGuardedFix: NOTHING_GUARDED_FIX,
    });
    process.stderr.write(text + note);
    process.exitCode = exitCode;
  });
}
