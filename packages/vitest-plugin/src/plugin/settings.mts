// The plugin's settings: core's one resolver, fed with the flags, the
// process env and the plugin options.
import { resolveGuardSettings, type RunnerGuardSettings } from '@mate-guard/core';

import { guardFlagArgs } from './cli-flags.mjs';
import { checkOptionNames, OPTION_SOURCE, type GuardAllocOptions } from './options.mjs';

export function resolveVitestSettings(options: GuardAllocOptions | undefined): RunnerGuardSettings {
  return resolveGuardSettings({
    runner: 'vitest',
    argv: guardFlagArgs(),
    env: process.env,
    options: checkOptionNames(options),
    optionNaming: 'key',
    optionSource: OPTION_SOURCE,
  });
}
