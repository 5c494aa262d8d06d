/** Thrown for a bad flag, environment variable or option value. */
export class GuardConfigError extends Error {
  readonly code = 'MATE_GUARD_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'GuardConfigError';
  }
}

/**
 * The exit status of every entry point for a bad setting: 2, the usage-error
 * status of command-line tools (getopt, argparse, the shell), so CI can tell
 * a broken configuration from a run that failed (1: a test or a violation).
 */
export const CONFIG_ERROR_EXIT = 2;

/**
 * Prints a bad setting's one line (`<program>: <message>`) and exits with
 * CONFIG_ERROR_EXIT, before any test. For code inside a runner's process
 * (a plugin, a reporter), where a thrown error would come out in the
 * runner's own format (a boxed "Startup Error", a stack) and status.
 */
export function exitOnConfigError(program: string, err: GuardConfigError): never {
  process.stderr.write(`${program}: ${err.message}\n`);
  process.exit(CONFIG_ERROR_EXIT);
}
