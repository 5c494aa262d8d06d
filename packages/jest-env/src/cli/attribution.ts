// What mate-jest prints after Jest is gone: who died of which guard fault,
// while running which test. Jest itself says nothing in band and only
// "worker ... terminated" with workers.
import { formatCrashAttribution, type ChildExit, type ViolationEvent } from '@mate-guard/core';


/**
 * One core attribution line per fatal event, and what it meant for Jest. A
 * worker's report went through Jest's pipe from that worker, which Jest may
 * not drain once the worker is dead: it is printed again from its JSON, so
 * it is never lost. In band, Jest wrote it straight to the terminal.
 */
export function crashAttribution(fatal: readonly ViolationEvent[], exit: ChildExit): string {
  let out = fatal
    .map((e) => {
      const inBand = e.pid === exit.pid;
      const line = formatCrashAttribution(e, inBand ? 'the Jest process (in band)' : 'Jest worker');
      return inBand ? line : `${line}[mate-guard] its report, from that JSON file:\n${e.text}`;
    })
    .join('');
  if (fatal.some((e) => e.pid === exit.pid)) {
    out += '[mate-guard] Jest was killed before it could print its results: test files after this one did not run\n';
  }
  return out;
}

/** Exit status for mate-jest: the truth about the run, never 0 after a violation. */
export function exitStatus(exit: ChildExit, violations: number): number {
  return exit.status === 0 && violations > 0 ? 1 : exit.status;
}
