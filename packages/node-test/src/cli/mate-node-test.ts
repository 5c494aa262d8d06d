// `mate-node-test [guard flags] [node options] [files...]`: `node --test`
// with mate-guard loaded in every test process, taking the guard flags node
// itself would refuse. It resolves the settings, runs node --test as a
// child and watches it: when a guard fault kills a test file's process it
// names the test, prints the summary and exits non-zero.
import * as path from 'node:path';

import {
  describeRunnerFlags,
  narrowedReruns,
  nodeFlagsToPassOn,
  superviseRun,
  type RerunLauncher,
  runCli,
  wantsHelp,
  watchRequested,
} from '@mate-guard/core/internal';

import { checkNodeVersion } from '../hooks/node-version';
import { NOTHING_GUARDED_UNDER_CLI, resolveNodeTestConfig } from '../hooks/settings';
import { PROCESS_LABEL } from '../reporter/run-end';
import { selection } from '../selection';

/** The plugin's entry point, preloaded into node --test and every test process it starts. */
export const PLUGIN_ENTRY = path.join(__dirname, '..', 'index.js');

const USAGE = `Usage: mate-node-test [guard options] [node options] [test files...]

Runs \`node --test\` with @mate-guard/node-test preloaded in every test
process. Guard options (precedence: these flags > MATE_NODE_TEST_GUARD_* > off):
${describeRunnerFlags('node-test').join('\n')}

Every other argument goes to node unchanged (--test-reporter=spec,
--test-name-pattern=..., --watch, files and globs).
`;

/** node's arguments: the node flags mate-node-test was started with, --test once, the plugin first. */
function nodeArgs(rest: readonly string[]): string[] {
  return [...nodeFlagsToPassOn(), '--test', '--require', PLUGIN_ENTRY, ...rest.filter((a) => a !== '--test')];
}

/** The same node --test command, narrowed to the damaged tests as node selects them (selection.ts, shared with `mate replay`). */
function rerunNode(rest: readonly string[]): RerunLauncher {
  const narrowed = narrowedReruns(
    selection,
    rest.filter((a) => a !== '--test'),
  );
  return (group) => ({ command: process.execPath, args: nodeArgs(narrowed(group)) });
}

export async function main(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  // A bad setting throws: runCli prints its one line, status 2.
  const { settings, explicit, rest } = resolveNodeTestConfig(argv);
  if (settings.enabled) checkNodeVersion();
  return superviseRun({
    runner: 'node-test',
    program: 'mate-node-test',
    name: 'node',
    settings,
    explicit,
    env: { ...process.env },
    command: process.execPath,
    args: nodeArgs(rest),
    // Every rerun ends inside node: its main process owns the run (same settings).
    watch: watchRequested(selection.args, rest),
    // Told to guard, it guarded nothing: the run fails (exit 2), with the line that says why.
    nothingGuardedFails: true,
    rerun: rerunNode(rest),
    // node --test's main process (the plugin preloaded) marks a run that started a test file.
    end: () => ({
      attribution: { label: () => PROCESS_LABEL, earlier: true },
      nothingGuardedFix: NOTHING_GUARDED_UNDER_CLI,
      testsMarked: true,
    }),
  });
}

export function run(): void {
  runCli('mate-node-test', main);
}
