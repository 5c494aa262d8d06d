// mate-vitest: Vitest's own CLI with the guard flags added. The guard flags
// are parsed out of the arguments (vitest would reject them) and handed to
// the plugin; everything else goes to vitest unchanged, and --help lists them.
import { pathToFileURL } from 'node:url';

import {
  CONFIG_ERROR_EXIT,
  describeRunnerFlags,
  flagUsage,
  parseFlags,
  RUNNER_FLAGS,
  spell,
  type ParsedFlags,
} from '@mate-guard/core/internal';

import { flagsWereRead, handOverFlags } from './flag-handover.mjs';
import { loadCreateCLI, vitestBin } from './vitest-cli.mjs';

function addGuardOptions(cli: { option(rawName: string, description: string): unknown }): void {
  // Listed for --help only: the flags themselves never reach vitest's parser.
  for (const row of RUNNER_FLAGS.rows) {
    const flag = spell.runnerFlag(row);
    const name = row.value.placeholder === undefined ? flag : flagUsage(row, flag);
    const off = row.value.placeholder === undefined ? ` --no-${flag.slice(2)} turns it off whatever the env says.` : '';
    cli.option(
      name,
      `[mate-guard] ${row.description}${off} Env ${spell.env('vitest', row)}. Needs guardAlloc() in the vitest config.`,
    );
  }
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  // A bad flag throws: runCli prints its one line, status 2.
  const flags: ParsedFlags = parseFlags(argv, RUNNER_FLAGS);
  const { rest, taken } = flags;
  handOverFlags(flags);
  // Vitest refused its arguments (an unknown option): its own error stands alone, no config was read.
  let refused = false;
  if (taken.length > 0) {
    process.on('exit', () => {
      // Vitest ran without a guardAlloc() plugin: the flags did nothing, and a run told to guard fails.
      if (!flagsWereRead() && !refused && !rest.includes('--help') && !rest.includes('-h')) {
        process.stderr.write(
          `[mate-guard] warning: ${taken.join(' ')} had no effect: the vitest config has no guardAlloc() plugin (import guardAlloc from '@mate-guard/vitest')\n`,
        );
        if (flags.values.enabled && !process.exitCode) process.exitCode = CONFIG_ERROR_EXIT;
      }
    });
  }
  const createCLI = await loadCreateCLI(import.meta.url);
  if (createCLI) {
    const cli = createCLI();
    addGuardOptions(cli);
    try {
      cli.parse([process.argv[0], process.argv[1], ...rest]);
    } catch (err) {
      refused = true;
      throw err;
    }
    return;
  }
  // No CLI builder found: run vitest's bin on the remaining arguments.
  if (rest.includes('--help') || rest.includes('-h')) {
    process.on('exit', () =>
      process.stdout.write(`\nmate-guard options:\n${describeRunnerFlags('vitest').join('\n')}\n`),
    );
  }
  const bin = vitestBin(import.meta.url);
  process.argv = [process.argv[0], bin, ...rest];
  await import(pathToFileURL(bin).href);
}
