// The plugin's settings: core's one resolver, fed with the flags, the
// process env and the plugin options.
import { BY_KEY, checkOptionNames, resolveRunnerSettings, type RunnerResolution } from '@mate-guard/core/internal';

import { commandLineFlags } from '../cli/flag-handover.mjs';
import { OPTION_SOURCE, type GuardAllocOptions } from './options.mjs';

export function resolveVitestSettings(options: GuardAllocOptions | undefined): RunnerResolution {
  return resolveRunnerSettings({
    runner: 'vitest',
    flags: commandLineFlags(),
    env: process.env,
    options: { values: checkOptionNames(options, OPTION_SOURCE), spelling: BY_KEY, source: OPTION_SOURCE },
  });
}
