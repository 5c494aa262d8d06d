// The end of a guarded run in node --test's main process (or a process that
// ran its tests itself): the test of any process a guard fault killed, the
// summary line, and an exit code that tells the truth (core's verdict, as
// process.exitCode). mate-node-test does the same from outside instead.
import { endRunAtExit as endAtExit, type GuardedRun } from '@mate-guard/core/internal';

import { NOTHING_GUARDED_FIX } from '../hooks/settings';

export const PROCESS_LABEL = 'node:test process';

/** At 'exit'. `note` follows the summary. */
export function endRunAtExit(run: GuardedRun, note = ''): void {
  endAtExit(
    run,
    {
      attribution: { label: () => PROCESS_LABEL, earlier: true },
      nothingGuardedFix: NOTHING_GUARDED_FIX,
      testsMarked: true,
    },
    note,
  );
}
