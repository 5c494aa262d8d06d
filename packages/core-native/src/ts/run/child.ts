// How every mate-guard watcher (guard-run, mate-jest, mate-mocha) runs the
// real command: same terminal, interrupts passed on, and the exit told the
// way a shell tells it, so the watcher can report after the child is gone.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  pid: number | undefined;
  /** `code`, or 128 + the signal number when the child died by a signal. */
  status: number;
}

/** The shell's exit status for a process that ended with (code, signal). */
function exitStatusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal ? (constants.signals[signal] ?? 1) : 1);
}

/** Runs `command` with inherited stdio; rejects only if it can't start. */
export function runChild(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env, cwd });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const stop = () => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
    };
    child.on('error', (err) => {
      stop();
      reject(err);
    });
    child.on('exit', (code, signal) => {
      stop();
      resolve({ code, signal, pid: child.pid, status: exitStatusOf(code, signal) });
    });
  });
}

// The inspector's flags bind a port this process already holds: a child given them could not open it.
const INSPECTOR = /^--(inspect(-brk|-wait|-port|-publish-uid)?|debug-port)(=|$)/;

/**
 * The node flags a mate-* CLI was started with (`node --expose-gc
 * mate-jest`), for the Node child that runs the runner: the user gave them
 * for the tests, which run there. The inspector's stay with this process.
 */
export function nodeFlagsToPassOn(execArgv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i];
    const m = INSPECTOR.exec(flag);
    if (!m) out.push(flag);
    else if (m[3] === '' && /port|uid/.test(m[1]) && i + 1 < execArgv.length && !execArgv[i + 1].startsWith('-')) i++; // its value, as a second word
  }
  return out;
}
