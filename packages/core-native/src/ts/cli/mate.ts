// The `mate` command.
import { CONFIG_ERROR_EXIT, GuardConfigError } from '../errors';
import { allocatorOptionsMarkdown, runnerSettingsMarkdown } from '../settings/docs';
import { BUILD_NATIVE_USAGE, buildNative } from './build-native';
import { guardRun, guardRunUsage, parseGuardRunArgs } from './guard-run';
import { mateReport, REPORT_USAGE } from './report';

const USAGE = `Usage: mate <command>

Commands:
  guard-run [options] -- <command...>   run a command with guarded JS buffers (see mate guard-run --help)
  report <dir>...                       merge the JSON reports of runs, shards and workers: each report once, one summary; exit 1 on any violation
  options                               list the allocator options and the runner settings (the README's tables)
  build-native                          build the native allocator from source where the prebuilt binary does not fit this machine

Runner plugins: @mate-guard/vitest (mate-vitest), @mate-guard/jest-env (mate-jest), @mate-guard/mocha (mate-mocha), @mate-guard/node-test (mate-node-test).
`;

function listOptions(): string {
  return `Allocator options (installGuardAllocator):\n\n${allocatorOptionsMarkdown()}\nRunner settings:\n\n${runnerSettingsMarkdown()}`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
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
        if (rest.includes('-h') || rest.includes('--help')) {
          process.stdout.write(REPORT_USAGE);
          return 0;
        }
        return mateReport(rest);
      case 'build-native':
        if (rest.includes('-h') || rest.includes('--help')) {
          process.stdout.write(BUILD_NATIVE_USAGE);
          return 0;
        }
        if (rest.length) throw new GuardConfigError(`mate build-native takes no arguments, got ${JSON.stringify(rest[0])}`);
        return buildNative();
      case 'options':
        process.stdout.write(listOptions());
        return 0;
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(USAGE);
        return command === undefined ? CONFIG_ERROR_EXIT : 0;
      default:
        throw new GuardConfigError(`unknown command ${JSON.stringify(command)}; known: guard-run, report, options, build-native`);
    }
  } catch (err) {
    if (err instanceof GuardConfigError) {
      process.stderr.write(`mate: ${err.message}\n`);
      return CONFIG_ERROR_EXIT;
    }
    throw err;
  }
}
