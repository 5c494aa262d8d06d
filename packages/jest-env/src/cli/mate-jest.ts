// `mate-jest`: Jest with guard flags. It runs Jest as a child and watches
// it, because in band a guard fault kills Jest itself before it can say
// anything: afterwards the run's report directory names the test.
import {
  narrowedReruns,
  nodeFlagsToPassOn,
  parseFlags,
  resolveRunnerSettings,
  runChild,
  RUNNER_FLAGS,
  superviseRun,
  type ChildExit,
  type RerunLauncher,
  type RunnerResolution,
  wantsHelp,
  watchRequested,
} from '@mate-guard/core/internal';

import { withGuardEnvironment } from './environment';
import { mateJestHelp } from './help';
import { readJestConfig } from './jest-config';
import { resolveJestBin } from './jest-bin';
import { withGuardReporter } from './reporters';
import { checkJestVersion, jestVersionAbove } from '../jest-version';
import { selection } from '../selection';

/** Flags and MATE_JEST_GUARD_*, resolved before Jest starts: a bad value stops the run before any test (runCli prints it). */
function resolve(argv: readonly string[]): RunnerResolution & { rest: string[] } {
  const { values, rest } = parseFlags(argv, RUNNER_FLAGS);
  return { ...resolveRunnerSettings({ runner: 'jest', flags: values, env: process.env }), rest };
}

/** How a Jest run that was asked to guard and guarded nothing is fixed (a file's docblock can pick another environment). */
export const NOTHING_GUARDED_FIX =
  "no test file used @mate-guard/jest-env: remove a `@jest-environment` docblock that picks another one, or set testEnvironment: '@mate-guard/jest-env' in the Jest config";

/** The same Jest command, narrowed to the damaged tests as Jest selects them (selection.ts, shared with `mate replay`). */
function rerunJest(bin: string, rest: readonly string[]): RerunLauncher {
  const narrowed = narrowedReruns(selection, rest);
  return (group) => ({ command: process.execPath, args: [...nodeFlagsToPassOn(), bin, ...narrowed(group)] });
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // Jest not installed here: a usage error, runCli's one line.
  const bin = resolveJestBin();
  if (wantsHelp(argv)) {
    process.stdout.write(mateJestHelp());
    const exit = await runChild(process.execPath, [...nodeFlagsToPassOn(), bin, '--help'], process.env);
    process.exitCode = exit.code ?? 1;
    return;
  }
  const { settings, explicit, rest } = resolve(argv);
  // A Jest outside the supported range is refused (runCli's one line, exit 2), never half guarded.
  if (settings.enabled) checkJestVersion(jestVersionAbove(bin));
  // The reporter names crashed tests in Jest's results (JUnit, --json) and, in watch mode, owns the run.
  const withReporter = await withGuardReporter(rest, bin);
  const { note } = withReporter;
  if (note && settings.enabled) process.stderr.write(`${note}\n`);
  // The environment of each test file reads the handoff; its own options rank below flags and env.
  const env = { ...process.env };
  // Guarding asked for and the config names another environment: ours, wrapping it.
  const supplied = settings.enabled
    ? withGuardEnvironment(withReporter.args, await readJestConfig(rest, bin), env)
    : { args: withReporter.args };
  if (supplied.note) process.stderr.write(supplied.note);
  const { args } = supplied;
  const inBand = (pid: number | undefined, exit: ChildExit) => pid === exit.pid;
  process.exitCode = await superviseRun({
    runner: 'jest',
    program: 'mate-jest',
    name: 'jest',
    settings,
    explicit,
    env,
    command: process.execPath,
    // Node flags given to mate-jest are for the tests (Jest's workers inherit Jest's).
    args: [...nodeFlagsToPassOn(), bin, ...args],
    // Every rerun ends inside Jest: its reporter owns the run (same settings, a summary per rerun).
    // `--watchAll=false` (CI) is not watch mode.
    watch: watchRequested(selection.args, rest),
    // Told to guard, it guarded nothing: the run fails (exit 2), with the line that says why.
    nothingGuardedFails: true,
    rerun: rerunJest(bin, args),
    exited: (run, exit) => {
      // Not after Jest showed its results (a death at exit): every file had run.
      const shown = run.read().resultsShown;
      if (run.crashed().some((e) => inBand(e.pid, exit) && !shown.includes(e.pid))) {
        process.stderr.write(
          '[mate-guard] Jest was killed before it could print its results: test files after this one did not run\n',
        );
      }
    },
    end: (_run, exit) => ({
      // A worker's report went through Jest's pipe, which Jest may not drain
      // once the worker is dead: print it again (in band it went to the
      // terminal), and what it reported before dying, which Jest shows only
      // when a file ends.
      attribution: {
        label: (e) => (inBand(e.pid, exit) ? 'the Jest process (in band)' : 'Jest worker'),
        reprint: (e) => !inBand(e.pid, exit),
        earlier: true,
      },
      // Jest passed, yet a process found damage (e.g. at exit): show it, fail.
      showReportsIfPassed: true,
      nothingGuardedFix: NOTHING_GUARDED_FIX,
      // Our reporter marks a run in which Jest found test files: without
      // the mark Jest ran none (no match, --shard past the files, an
      // argument Jest refused) and its own words and status stand.
      testsMarked: note === undefined,
    }),
  });
}
