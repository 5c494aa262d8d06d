// A Jest test file's settings. mate-jest resolves the flags and
// MATE_JEST_GUARD_* once for the run and hands the result over; the file's
// testEnvironmentOptions (the config's, with a `@jest-environment-options`
// docblock merged in by Jest) can only be read here, and rank below them.
// Without mate-jest, this is the first process that sees the settings.
import {
  GuardConfigError,
  optionsLayer,
  readHandoff,
  readOptions,
  refuseWithoutDevice,
  resolveRunnerSettings,
  rowsOn,
  spell,
  type GuardSettings,
} from '@mate-guard/core/internal';

import { jestOptionName, jestSpelling } from '../spelling';

const SOURCE = 'testEnvironmentOptions';

/**
 * The report directory and the suppressions are the run's, set up before
 * any file starts: a file cannot change them.
 */
function checkRunWide(options: Readonly<Record<string, unknown>> | undefined): void {
  for (const row of rowsOn('runner')) {
    const name = jestOptionName(row);
    if (!row.runWide || options?.[name] === undefined) continue;
    throw new GuardConfigError(
      `${SOURCE} ${name}: ${row.key} is set once for the whole run, before any test file starts; give it to the reporter ` +
        `(reporters: ['default', ['@mate-guard/jest-env/reporter', { ${name}: ... }]]), to mate-jest (${spell.runnerFlag(row)}) or as ${spell.env('jest', row)}`,
    );
  }
}

export function resolveJestSettings(
  options: Readonly<Record<string, unknown>> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): GuardSettings {
  const handoff = readHandoff(env);
  if (!handoff) {
    return resolveRunnerSettings({
      runner: 'jest',
      env,
      options: { values: options, spelling: jestSpelling, source: SOURCE },
    }).settings;
  }
  checkRunWide(options);
  const fromOptions = readOptions(options, jestSpelling, SOURCE);
  const explicit = Object.fromEntries(handoff.explicit.map((k) => [k, handoff.settings[k]]));
  const settings = { ...handoff.settings, ...fromOptions, ...explicit };
  // The run's flags and variables were checked where they were resolved; a file's options are checked here.
  refuseWithoutDevice(settings, [optionsLayer(fromOptions, { spelling: jestSpelling, source: SOURCE })]);
  return settings;
}
