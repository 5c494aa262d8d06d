// Mocha's side of core's one resolver: flag > MATE_MOCHA_GUARD_* > rc key > off.
import { parseFlags, resolveRunnerSettings, RUNNER_FLAGS, type RunnerResolution } from '@mate-guard/core/internal';

import { mochaSpelling } from '../spelling';
import { loadMochaOptions } from './mocha-options';

export interface MochaGuardConfig extends RunnerResolution {
  /** The arguments without the guard flags. */
  rest: string[];
  /** Mocha's merged options (command line without guard flags, rc, package.json). */
  mochaOptions: Record<string, unknown>;
}

/**
 * The guard keys of Mocha's options (`guard-*`): the rc file's, since guard
 * flags were taken out. Misspelled ones are kept, for the resolver to refuse.
 */
function rcGuardOptions(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts))
    if (key.startsWith('guard-') && value !== undefined) out[key] = value;
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
  const { values, rest } = parseFlags(argv, { ...RUNNER_FLAGS, spaceValues });
  // Without the guard flags, so that Mocha's parser (which may give an
  // unknown flag the next word as its value) sees only rc values for them.
  const mochaOptions = loadOptions(rest);
  const resolution = resolveRunnerSettings({
    runner: 'mocha',
    flags: values,
    env,
    options: {
      values: rcGuardOptions(mochaOptions),
      spelling: mochaSpelling,
      source: 'mocha config (.mocharc / package.json "mocha") key',
    },
  });
  return { ...resolution, rest, mochaOptions };
}
