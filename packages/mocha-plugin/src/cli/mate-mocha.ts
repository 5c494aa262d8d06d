// `mate-mocha [guard flags] [mocha args...]`: mocha with mate-guard, which
// also takes `--guard-mode tail` with a space. It runs mocha as a child and
// watches it: when a guard fault kills mocha itself (serial) or a worker
// (--parallel), it names the test that was running, prints the summary and
// exits non-zero, whatever mocha managed to say.
import {
  describeFlags,
  GuardConfigError,
  parseGuardFlags,
  runChild,
  RunReportCollector,
  settingsToFlags,
  type RunnerGuardSettings,
} from '@mate-guard/core';

import { WATCHED_ENV } from '../handoff';
import { loadMochaOptions, runsInWorkers } from '../mocha-options';
import { describeFatal } from '../run-end';
import { resolveMochaConfig } from '../settings';
import { findMochaBin, PLUGIN_ENTRY } from './mocha-bin';

const USAGE = `Usage: mate-mocha [guard options] [mocha options] [spec...]

Runs mocha with the @mate-guard/mocha plugin. Guard options (also
--guard-mode=tail; precedence: these flags > MATE_MOCHA_GUARD_* > .mocharc keys > off):
${describeFlags('mocha').join('\n')}

Every other argument goes to mocha unchanged. mocha's own help follows.
`;

function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '-h' || a === '--help');
}

function mochaOptionsOrEmpty(rest: readonly string[]): Record<string, unknown> {
  try {
    return loadMochaOptions(rest);
  } catch {
    return {}; // mocha itself reports a broken config, in its own words
  }
}

function resolve(argv: readonly string[]): { settings: RunnerGuardSettings; rest: string[]; opts: Record<string, unknown> } {
  const { settings, mochaOptions } = resolveMochaConfig(argv, true, process.env, mochaOptionsOrEmpty);
  return { settings, rest: parseGuardFlags(argv, true).rest, opts: mochaOptions };
}

interface Launch {
  args: string[];
  env: NodeJS.ProcessEnv;
  collector?: RunReportCollector;
}

function launch(rest: readonly string[], settings: RunnerGuardSettings): Launch {
  const env = { ...process.env };
  if (!settings.enabled) return { args: ['--no-guard-alloc', ...rest], env };
  const collector = new RunReportCollector('mocha', env);
  env[WATCHED_ENV] = '1';
  // Flags first: after a `--` they would be spec files. The resolved
  // settings as flags rank first in the child, so it resolves the same.
  return { args: ['--require', PLUGIN_ENTRY, ...settingsToFlags(settings), ...rest], env, collector };
}

async function runMocha(mochaBin: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    return (await runChild(process.execPath, [mochaBin, ...args], env)).status;
  } catch (err) {
    process.stderr.write(`mate-mocha: could not start mocha: ${(err as Error).message}\n`);
    return 127;
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const mochaBin = findMochaBin();
  if (!mochaBin) {
    process.stderr.write('mate-mocha: mocha is not installed here (npm install --save-dev mocha)\n');
    return 2;
  }
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return runMocha(mochaBin, ['--help'], process.env);
  }
  let resolved: ReturnType<typeof resolve>;
  try {
    resolved = resolve(argv);
  } catch (err) {
    if (!(err instanceof GuardConfigError)) throw err;
    process.stderr.write(`mate-mocha: ${err.message}\n`);
    return 2;
  }
  const { settings, rest, opts } = resolved;
  const { args, env, collector } = launch(rest, settings);
  let code = await runMocha(mochaBin, args, env);
  if (collector) {
    const fatal = collector.fatal();
    if (fatal.length) process.stderr.write(describeFatal(fatal, runsInWorkers(opts)));
    const { text, report } = collector.finish();
    process.stderr.write(text);
    if (report.violations.length && code === 0) code = 1;
  }
  return code;
}

export function run(): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`mate-mocha: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
