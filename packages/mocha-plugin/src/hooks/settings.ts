// Mocha's side of core's one resolver: flag > MATE_MOCHA_GUARD_* > rc key > off.
import { parseGuardFlags, resolveGuardSettings, SETTINGS, type RunnerGuardSettings } from '@mate-guard/core';

import { loadMochaOptions } from './mocha-options';

export interface MochaGuardConfig {
  settings: RunnerGuardSettings;
  /** Mocha's merged options (command line without guard flags, rc, package.json). */
  mochaOptions: Record<string, unknown>;
}

/** The guard keys of Mocha's options: the rc file's, since guard flags were taken out. */
function rcGuardOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const row of SETTINGS) if (opts[row.flag] !== undefined) out[row.flag] = opts[row.flag];
  return out;
}

/**
 * `spaceValues` is false for plain mocha, which has already taken the value
 * of `--guard-mode tail` as a spec file; mate-mocha allows it. A bad flag is
 * reported first, then the environment, then the rc file.
 */
export function resolveMochaConfig(
  argv: readonly string[],
  spaceValues: boolean,
  env: NodeJS.ProcessEnv = process.env,
  loadOptions: (argv: readonly string[]) => Record<string, unknown> = loadMochaOptions,
): MochaGuardConfig {
  const { rest } = parseGuardFlags(argv, spaceValues);
  // Without the guard flags, so that Mocha's parser (which may give an
  // unknown flag the next word as its value) sees only rc values for them.
  const mochaOptions = loadOptions(rest);
  const settings = resolveGuardSettings({
    runner: 'mocha',
    argv,
    spaceValues,
    env,
    options: rcGuardOptions(mochaOptions),
    optionNaming: 'flag',
    optionSource: 'mocha config (.mocharc / package.json "mocha") key',
  });
  return { settings, mochaOptions };
}
