// Who owns a run, decided here and nowhere else. The owner (the process
// that started the run: a mate-* CLI, guard-run, a runner's main process)
// reads the report directory at the end, names crashed processes' tests,
// prints the summary and decides the exit code; every other process of the
// run leaves that to it. The handoff names the owner (ownerPid); a handoff
// without one is a launcher's (mate-* --watch) that left the run to the
// runner's main process.
import { readHandoff, type Handoff } from '../settings/handoff';

export interface RunOwnership {
  /** This process owns the run: it starts it (GuardedRun.start, once) and ends it. */
  owns: boolean;
  /** Another process owns the run and reads the report directory after this one. */
  elsewhere: boolean;
  /**
   * The settings another process resolved and handed over (a launcher, the
   * owner): used as they are. Undefined when none, or when this process
   * handed them to itself.
   */
  handed: Handoff | undefined;
}

/**
 * `mayStart`: this process may start a run that nobody started (a runner's
 * main process; a test file's process where no main process loaded the
 * plugin). Throws GuardConfigError for a broken handoff.
 */
export function runOwnership(mayStart: boolean, env: NodeJS.ProcessEnv = process.env): RunOwnership {
  const handoff = readHandoff(env);
  const owner = handoff?.ownerPid;
  return {
    owns: owner === process.pid || (owner === undefined && mayStart),
    elsewhere: owner !== undefined && owner !== process.pid,
    handed: owner === process.pid ? undefined : handoff,
  };
}

/** No process owns this one's run (a process guarded on its own): it says at exit what an owner would. */
export function runsAlone(env: NodeJS.ProcessEnv = process.env): boolean {
  const { owns, elsewhere } = runOwnership(false, env);
  return !owns && !elsewhere;
}
