// `mate-jest`: Jest with guard flags. It runs Jest as a child and watches
// it, because in band a guard fault kills Jest itself before it can say
// anything: afterwards the run's report directory names the test.
import {
  GuardConfigError,
  parseGuardFlags,
  resolveGuardSettings,
  runChild,
  RunReportCollector,
  settingsToFlags,
  type ChildExit,
} from '@mate-guard/core';

import { FLAGS_ENV } from '../settings';
import { crashAttribution, exitStatus } from './attribution';
import { mateJestHelp } from './help';
import { resolveJestBin } from './jest-bin';

function fail(message: string, status = 2): never {
  process.stderr.write(`mate-jest: ${message}\n`);
  process.exit(status);
}

/** Flags and MATE_JEST_GUARD_* checked before Jest starts: a bad value stops the run before any test. */
function checkedFlags(argv: readonly string[]): { flags: string[]; rest: string[] } {
  try {
    const { settings, rest } = parseGuardFlags(argv, true);
    const flags = settingsToFlags(settings);
    resolveGuardSettings({ runner: 'jest', argv: flags, env: process.env });
    return { flags, rest };
  } catch (err) {
    if (err instanceof GuardConfigError) fail(err.message);
    throw err;
  }
}

function runJest(bin: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<ChildExit> {
  // Interrupts go on to Jest; mate-jest stays alive to report after it exits.
  return runChild(process.execPath, [bin, ...args], env);
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  let bin: string;
  try {
    bin = resolveJestBin();
  } catch (err) {
    fail((err as Error).message);
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(mateJestHelp());
    const exit = await runJest(bin, ['--help'], process.env);
    process.exitCode = exit.code ?? 1;
    return;
  }
  const { flags, rest } = checkedFlags(argv);
  const collector = new RunReportCollector('jest'); // exports MATE_GUARD_REPORT_DIR to Jest and its workers
  const exit = await runJest(bin, rest, { ...process.env, [FLAGS_ENV]: JSON.stringify(flags) });

  const report = collector.read();
  const fatal = collector.fatal();
  if (fatal.length) process.stderr.write(crashAttribution(fatal, exit));
  const unreported = !exit.signal && exit.code === 0 ? report.violations : [];
  // Jest passed, yet a process found damage (e.g. at exit): show it, fail.
  for (const v of unreported) process.stderr.write(v.text);
  const guarded = report.processes.length > 0 || report.violations.length > 0;
  const { text } = collector.finish();
  if (guarded) process.stderr.write(text);
  process.exitCode = exitStatus(exit, report.violations.length);
}
