// mate-vitest: Vitest's own CLI with the guard flags added. The guard flags
// are taken out of the arguments (vitest would reject them) and handed to
// the plugin; everything else goes to vitest unchanged, and --help lists them.
import { pathToFileURL } from 'node:url';

import { describeFlags, envName, GuardConfigError, GUARD_MODES, parseGuardFlags, SETTINGS } from '@mate-guard/core';

import { cliFlagsWereRead, handOverCliFlags } from './cli-flags.mjs';
import { loadCreateCLI, vitestBin } from './vitest-cli.mjs';

function guardFlagsOnly(argv: readonly string[], rest: readonly string[]): string[] {
  // What parseGuardFlags removed, in order (before any `--`).
  const out: string[] = [];
  let r = 0;
  for (const arg of argv) {
    if (r < rest.length && arg === rest[r]) r++;
    else out.push(arg);
  }
  return out;
}

function addGuardOptions(cli: { option(rawName: string, description: string): unknown }): void {
  // Listed for --help only: the flags themselves never reach vitest's parser.
  for (const row of SETTINGS) {
    const name = row.kind === 'boolean' ? `--${row.flag}` : `--${row.flag} <${GUARD_MODES.join('|')}>`;
    const off = row.negatable ? ` --no-${row.flag} turns it off whatever the env says.` : '';
    cli.option(name, `[mate-guard] ${row.description}${off} Env ${envName('vitest', row)}. Needs guardAlloc() in the vitest config.`);
  }
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  let rest: string[];
  try {
    rest = parseGuardFlags(argv).rest;
  } catch (err) {
    if (!(err instanceof GuardConfigError)) throw err;
    process.stderr.write(`mate-vitest: ${err.message}\n`);
    process.exitCode = 1;
    return;
  }
  const flags = guardFlagsOnly(argv, rest);
  handOverCliFlags(flags);
  if (flags.length > 0) {
    process.on('exit', () => {
      // Vitest ran (or failed to start) without a guardAlloc() plugin: the flags did nothing.
      if (!cliFlagsWereRead() && !rest.includes('--help') && !rest.includes('-h')) {
        process.stderr.write(`[mate-guard] warning: ${flags.join(' ')} had no effect: the vitest config has no guardAlloc() plugin (import guardAlloc from '@mate-guard/vitest')\n`);
      }
    });
  }
  const createCLI = await loadCreateCLI(import.meta.url);
  if (createCLI) {
    const cli = createCLI();
    addGuardOptions(cli);
    cli.parse([process.argv[0], process.argv[1], ...rest]);
    return;
  }
  // No CLI builder found: run vitest's bin on the remaining arguments.
  if (rest.includes('--help') || rest.includes('-h')) {
    process.on('exit', () => process.stdout.write(`\nmate-guard options:\n${describeFlags('vitest').join('\n')}\n`));
  }
  const bin = vitestBin(import.meta.url);
  process.argv = [process.argv[0], bin, ...rest];
  await import(pathToFileURL(bin).href);
}
