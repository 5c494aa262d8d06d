// Mocha's side of core's one resolver: flag > MATE_MOCHA_GUARD_* > rc key > off.
import { resolveGuardSettings, SETTINGS, type RunnerGuardSettings } from '@mate-guard/core';

/** The guard keys of Mocha's merged options (the rc file's, when no flag set them). */
export function rcGuardOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const row of SETTINGS) if (opts[row.flag] !== undefined) out[row.flag] = opts[row.flag];
  return out;
}

/**
 * `spaceValues` is false for plain mocha, which has already taken the value
 * of `--guard-mode tail` as a spec file; mate-mocha allows it.
 */
export function resolveMochaSettings(
  argv: readonly string[],
  opts: Record<string, unknown>,
  spaceValues: boolean,
  env: NodeJS.ProcessEnv = process.env,
): RunnerGuardSettings {
  return resolveGuardSettings({
    runner: 'mocha',
    argv,
    spaceValues,
    env,
    options: rcGuardOptions(opts),
    optionNaming: 'flag',
    optionSource: 'mocha config (.mocharc / package.json "mocha") key',
  });
}
