import { visible } from './text/escape';

/** Thrown for a bad flag, environment variable or option value. */
export class GuardConfigError extends Error {
  readonly code = 'MATE_GUARD_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'GuardConfigError';
  }
}

/**
 * No native allocator fits or loads on this machine (unsupported platform,
 * a prebuilt binary that does not fit and no source build). A setup problem
 * handled as a bad setting is: one line and exit 2 from every entry point.
 */
export class NativeUnavailableError extends GuardConfigError {}

/**
 * The exit status of every entry point for a bad setting: 2, the usage-error
 * status of command-line tools (getopt, argparse, the shell), so CI can tell
 * a broken configuration from a run that failed (1: a test or a violation).
 */
export const CONFIG_ERROR_EXIT = 2;

/**
 * The one way a bad setting leaves, for every entry point: its one line
 * (`<program>: <message>`) on stderr; returns the exit status to end with
 * (CONFIG_ERROR_EXIT). The Python plugin mirrors it (pytest_plugin.py).
 */
export function reportConfigError(program: string, err: GuardConfigError): number {
  // One line whatever it quotes (a record's, a file's text): control characters shown, never obeyed.
  process.stderr.write(`${program}: ${visible(err.message)}\n`);
  return CONFIG_ERROR_EXIT;
}

/**
 * Reports a bad setting (reportConfigError) and exits at once, before any
 * test. For code inside a runner's process (a plugin, a reporter), where a
 * thrown error would come out in the runner's own format (a boxed "Startup
 * Error", a stack) and status.
 */
export function exitOnConfigError(program: string, err: GuardConfigError): never {
  process.exit(reportConfigError(program, err));
}

/**
 * Runs `fn` (a plugin's start in the runner's process); a bad setting ends
 * the process as exitOnConfigError does, anything else propagates.
 */
export function orExitOnConfigError(program: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof GuardConfigError)) throw err;
    exitOnConfigError(program, err);
  }
}

/** A CLI's `-h`/`--help`, before any `--` (what follows it is the program's). */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '-h' || a === '--help');
}

/**
 * Every CLI's entry (mate, each mate-*): `main`'s status becomes the exit
 * code (undefined: the program set it itself, as Vitest does when its run
 * ends); a bad setting is one line `<program>: <what>` with status 2; a
 * crash is printed as `<program>: <stack>` with status 1.
 */
export function runCli(program: string, main: (argv: string[]) => Promise<number | undefined>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== undefined) process.exitCode = code;
    },
    (err: unknown) => {
      // A bad setting or no usable native binary found on the way: its one line.
      if (err instanceof GuardConfigError) {
        process.exitCode = reportConfigError(program, err);
        return;
      }
      process.stderr.write(`${program}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
