// What mate-jest prints after Jest is gone: who died of which guard fault,
// while running which test. Jest itself says nothing in band and only
// "worker ... terminated" with workers.
import { constants } from 'node:os';

import type { ViolationEvent } from '@mate-guard/core';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The pid of the Jest main process (in-band tests run there). */
  pid: number | undefined;
}

function who(event: ViolationEvent, exit: ChildExit): string {
  return event.pid === exit.pid ? 'the Jest process (tests ran in band)' : `a Jest worker (pid ${event.pid})`;
}

/** One block per fatal event: the kind, the allocation, the test. */
export function formatCrashAttribution(fatal: readonly ViolationEvent[], exit: ChildExit): string {
  let out = '';
  for (const e of fatal) {
    const a = e.allocation;
    out +=
      `[mate-guard] ${e.kind} killed ${who(e, exit)} while running: ${e.test ?? '(no test was running)'}\n` +
      `[mate-guard]   allocation #${a.id} (${a.size} bytes, ${a.mode} mode); the full report is above and in ${e.file}\n`;
  }
  const inBandDeath = fatal.some((e) => e.pid === exit.pid);
  if (inBandDeath) {
    out += '[mate-guard] Jest was killed before it could print its results: test files after this one did not run\n';
  }
  return out;
}

/** Exit status for mate-jest: the truth about the run, never 0 after a violation. */
export function exitStatus(exit: ChildExit, violations: number): number {
  if (exit.signal) {
    return 128 + (constants.signals[exit.signal] ?? 1);
  }
  const code = exit.code ?? 1;
  return code === 0 && violations > 0 ? 1 : code;
}
