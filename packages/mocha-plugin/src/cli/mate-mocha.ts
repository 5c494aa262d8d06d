// `mate-mocha [guard flags] [mocha args...]`: mocha with mate-guard, which
// also takes `--guard-mode tail` with a space. It resolves the settings,
// runs mocha as a child and watches it: when a guard fault kills mocha
// itself (serial) or a worker (--parallel), it names the test that was
// running, prints the summary and exits non-zero, whatever mocha managed to say.
import {
  describeRunnerFlags,
  GuardConfigError,
  narrowedReruns,
  nodeFlagsToPassOn,
  runChild,
  superviseRun,
  type RerunLauncher,
  runCli,
  wantsHelp,
  watchRequested,
} from '@mate-guard/core/internal';

import { loadMochaOptions, runsInWorkers } from '../hooks/mocha-options';
import { checkProjectMocha } from '../hooks/mocha-version';
import { resolveMochaConfig } from '../hooks/settings';
import { selection } from '../selection';
import { findMochaBin, PLUGIN_ENTRY } from './mocha-bin';

const USAGE = `Usage: mate-mocha [guard options] [mocha options] [spec...]

Runs mocha with the @mate-guard/mocha plugin. Guard options (also
--guard-mode=tail; precedence: these flags > MATE_MOCHA_GUARD_* > .mocharc keys > off):
${describeRunnerFlags('mocha').join('\n')}

Every other argument goes to mocha unchanged. mocha's own help follows.
`;

function mochaOptionsOrEmpty(rest: readonly string[]): Record<string, unknown> {
  try {
    return loadMochaOptions(rest);
  } catch {
    return {}; // mocha itself reports a broken config, in its own words
  }
}

async function runMocha(mochaBin: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    return (await runChild(process.execPath, [...nodeFlagsToPassOn(), mochaBin, ...args], env)).status;
  } catch (err) {
    process.stderr.write(`mate-mocha: could not start mocha: ${(err as Error).message}\n`);
    return 127;
  }
}

/** Mocha's own reading (command line over rc, `--watch=false` included), else the words themselves. */
const watching = (args: readonly string[], options: Record<string, unknown>) =>
  options.watch !== undefined ? options.watch === true : watchRequested(selection.args, args);

/** The same mocha command, narrowed to the damaged tests as mocha selects them (selection.ts, shared with `mate replay`). */
function rerunMocha(mochaBin: string, rest: readonly string[]): RerunLauncher {
  const narrowed = narrowedReruns(selection, rest);
  return (group) => ({
    command: process.execPath,
    args: [...nodeFlagsToPassOn(), mochaBin, '--require', PLUGIN_ENTRY, ...narrowed(group)],
  });
}

export async function main(argv: readonly string[]): Promise<number> {
  // The plugin checks the running Mocha; this names an old one before its missing executable sends us to another.
  if (!wantsHelp(argv)) checkProjectMocha();
  const mochaBin = findMochaBin();
  if (!mochaBin) {
    throw new GuardConfigError('mocha is not installed here (npm install --save-dev mocha)');
  }
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return runMocha(mochaBin, ['--help'], process.env);
  }
  // A bad setting throws: runCli prints its one line, status 2.
  const { settings, explicit, rest, mochaOptions } = resolveMochaConfig(argv, true, process.env, mochaOptionsOrEmpty);
  const label = runsInWorkers(mochaOptions) ? 'mocha worker' : 'mocha process';
  return superviseRun({
    runner: 'mocha',
    program: 'mate-mocha',
    name: 'mocha',
    settings,
    explicit,
    // The child's plugin reads the handoff; mocha's own parser never sees a guard flag.
    env: { ...process.env },
    command: process.execPath,
    // Node flags given to mate-mocha are for the tests: mocha runs with them.
    args: [...nodeFlagsToPassOn(), mochaBin, '--require', PLUGIN_ENTRY, ...rest],
    // Every rerun ends inside mocha: the plugin there owns the run (same settings, a summary per rerun).
    watch: watching(rest, mochaOptions),
    rerun: rerunMocha(mochaBin, rest),
    // Mocha shows failures at the end of the run (workers: of the file): a dead process's are lost.
    end: () => ({ attribution: { label: () => label, earlier: true } }),
  });
}

export function run(): void {
  runCli('mate-mocha', main);
}
