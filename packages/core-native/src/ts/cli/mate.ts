// The `mate` command.
import * as path from 'node:path';

import { coreVersion } from '../core-version';
import { CONFIG_ERROR_EXIT, GuardConfigError, wantsHelp } from '../errors';
import { ownPackages } from '../own-packages';
import {
  allocatorOptionsMarkdown,
  runnerPackageSettingsMarkdown,
  runnerSettingsMarkdown,
  type ConfigColumn,
} from '../settings/docs';
import { findAdapter, installedRunners, loadAdapter } from '../run/runner-adapter';
import { checkoutOf } from '../run/replay-trust';
import { BUILD_NATIVE_USAGE, buildNative } from './build-native';
import { guardRun, guardRunUsage, parseGuardRunArgs } from './guard-run';
import { mateReplay, REPLAY_USAGE } from './replay';
import { mateReport, REPORT_USAGE } from './report';

const USAGE = `Usage: mate <command>

Commands:
  guard-run [options] -- <command...>   run a command with guarded JS buffers (see mate guard-run --help)
  report <dir>... [--format f]          merge the JSON reports of runs, shards and workers: each report once, one summary; exit 1 on any violation
                                        (--format sarif: SARIF 2.1.0; --format github: workflow annotations)
  replay <report-dir> [options]         rerun what a recorded run ran (the tests its violations name, under the runner
                                        installed here; a guard-run command with --trust-record) with its settings, in
                                        --guard-mode/--alignment given (see mate replay --help)
  options [--runner <name>]             list the allocator options and the runner settings (the README's tables);
                                        --runner <name>: an installed runner's (its package README's table)
  --version, -v                         print the version of mate (@mate-guard/core)
  build-native                          build the native allocator from source where the prebuilt binary does not fit this machine
`;

/** The runner plugins installed with this core (found, not listed: a new runner package shows up by itself). */
function pluginsLine(): string {
  const plugins = ownPackages([path.resolve(__dirname, '..', '..'), process.cwd()])
    .filter((p) => p.name !== '@mate-guard/core')
    .map((p) => (p.bin.length ? `${p.name} (${p.bin.join(', ')})` : p.name));
  return `\nRunner plugins${plugins.length ? `: ${plugins.join(', ')}` : ': none installed here (the README lists them)'}.\n`;
}

/** The config columns of the installed runners' adapters, by runner name (the combined table's column order does not depend on where mate runs). */
async function configColumns(): Promise<ConfigColumn[]> {
  const cwd = process.cwd();
  const root = checkoutOf(cwd);
  const columns: ConfigColumn[] = [];
  for (const runner of installedRunners(cwd, root).sort()) {
    const column = (await loadAdapter(runner, findAdapter(runner, cwd, root)!)).configColumn;
    if (column) columns.push(column);
  }
  return columns;
}

async function listOptions(args: readonly string[]): Promise<string> {
  if (args.length > 0) {
    const runner = args[0] === '--runner' ? args[1] : /^--runner=(.*)$/.exec(args[0])?.[1];
    if (runner === undefined || args.length > (args[0] === '--runner' ? 2 : 1)) {
      throw new GuardConfigError(
        `mate options takes --runner <name> or nothing, got ${JSON.stringify(args.join(' '))}`,
      );
    }
    // The runner's package says how its config names a setting (its adapter): core lists no runner.
    const cwd = process.cwd();
    const file = findAdapter(runner, cwd, checkoutOf(cwd));
    if (!file) {
      const runners = installedRunners(cwd, checkoutOf(cwd));
      throw new GuardConfigError(
        runners.length
          ? `--runner: ${JSON.stringify(runner)} is not a runner installed here; installed: ${runners.join(', ')}`
          : `--runner: ${JSON.stringify(runner)} is not a runner installed here: no runner package is (the README lists them)`,
      );
    }
    return runnerPackageSettingsMarkdown(runner, (await loadAdapter(runner, file)).configColumn);
  }
  return `Allocator options (installGuardAllocator):\n\n${allocatorOptionsMarkdown()}\nRunner settings:\n\n${runnerSettingsMarkdown(await configColumns())}`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'guard-run': {
      const args = parseGuardRunArgs(rest);
      if (args === 'help') {
        process.stdout.write(guardRunUsage());
        return 0;
      }
      return await guardRun(args);
    }
    case 'report':
      if (wantsHelp(rest)) {
        process.stdout.write(REPORT_USAGE);
        return 0;
      }
      return mateReport(rest);
    case 'replay':
      if (wantsHelp(rest)) {
        process.stdout.write(REPLAY_USAGE);
        return 0;
      }
      return await mateReplay(rest);
    case 'build-native':
      if (wantsHelp(rest)) {
        process.stdout.write(BUILD_NATIVE_USAGE);
        return 0;
      }
      if (rest.length)
        throw new GuardConfigError(`mate build-native takes no arguments, got ${JSON.stringify(rest[0])}`);
      return buildNative();
    case 'options':
      process.stdout.write(await listOptions(rest));
      return 0;
    case '--version':
    case '-v':
      process.stdout.write(`${coreVersion()}\n`);
      return 0;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE + pluginsLine());
      return command === undefined ? CONFIG_ERROR_EXIT : 0;
    default:
      throw new GuardConfigError(
        `unknown command ${JSON.stringify(command)}; known: guard-run, report, replay, options, build-native`,
      );
  }
}
