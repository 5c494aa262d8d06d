// The end of a run inside the runner's own main process, the two ways a
// runner adapter asks for it: once at exit, or at the end of every round
// (watch mode). Both write the process's own counters first, then print the
// verdict's text; at exit its exit code becomes the process's.
import { flushGuardStats } from '../install/install';
import type { GuardedRun, RunEnd, RunVerdict } from './lifecycle';

export type EndOptions = Omit<RunEnd, 'status' | 'more'>;

/**
 * At 'exit', after core's own exit check (registered at install, earlier):
 * the runner's status is process.exitCode, which exit handlers may still
 * set. `note` follows the text. Returns the verdict, once given.
 */
export function endRunAtExit(run: GuardedRun, end: EndOptions, note = ''): () => RunVerdict | undefined {
  let verdict: RunVerdict | undefined;
  process.on('exit', () => {
    flushGuardStats(); // no-op unless the allocator is installed here
    verdict = run.finish({ ...end, status: Number(process.exitCode ?? 0) });
    if (!verdict.quiet) process.stderr.write(verdict.text + note);
    process.exitCode = verdict.exitCode;
  });
  // For a runner that sets its exit code in an 'exit' listener of its own, added after this one.
  return () => verdict;
}

/** Watch mode: one round ended with the runner's `status`; the process lives on (its exit code is the runner's). */
export function endRound(run: GuardedRun, status: number, end: EndOptions): RunVerdict {
  flushGuardStats();
  const verdict = run.finish({ ...end, status, more: true });
  if (!verdict.quiet) process.stderr.write(verdict.text);
  return verdict;
}
