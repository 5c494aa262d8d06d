// node --test --watch never exits: the main process says what each round
// found (its summary) when node reports the round drained, and lives on.
import { endRound, type GuardedRun } from '@mate-guard/core/internal';

import { NOTHING_GUARDED_FIX } from '../hooks/settings';
import type { NodeTest } from '../hooks/test-class';
import { PROCESS_LABEL } from './run-end';

/** node:test's report stream on the root test: items `{ type, data }`. */
interface Reporter {
  on(event: 'data', listener: (item: { type?: string; data?: { details?: unknown } }) => void): unknown;
}

export function endEachWatchRound(root: NodeTest, run: GuardedRun): void {
  const reporter = (root as NodeTest & { reporter?: Reporter }).reporter;
  if (!reporter) return;
  let failed = false;
  reporter.on('data', (item) => {
    if (item.type === 'test:fail') failed = true;
    if (item.type !== 'test:watch:drained') return;
    endRound(run, failed ? 1 : 0, {
      attribution: { label: () => PROCESS_LABEL },
      nothingGuardedFix: NOTHING_GUARDED_FIX,
    });
    failed = false;
  });
}
