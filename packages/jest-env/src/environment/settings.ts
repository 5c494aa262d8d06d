// A Jest test file's settings. mate-jest resolves the flags and
// MATE_JEST_GUARD_* once for the run and hands the result over; the file's
// testEnvironmentOptions (the config's, with a `@jest-environment-options`
// docblock merged in by Jest) can only be read here, and rank below them.
// Without mate-jest, this is the first process that sees the settings.
import { readHandoff, readOptions, resolveRunnerSettings, type GuardSettings } from '@mate-guard/core/internal';

const SOURCE = 'testEnvironmentOptions';

export function resolveJestSettings(
  options: Readonly<Record<string, unknown>> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): GuardSettings {
  const handoff = readHandoff(env);
  if (!handoff) {
    return resolveRunnerSettings({ runner: 'jest', env, options: { values: options, naming: 'jestOption', source: SOURCE } }).settings;
  }
  const fromOptions = readOptions(options, 'jestOption', SOURCE);
  const explicit = Object.fromEntries(handoff.explicit.map((k) => [k, handoff.settings[k]]));
  return { ...handoff.settings, ...fromOptions, ...explicit };
}
