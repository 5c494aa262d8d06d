// The options `guardAlloc()` takes, checked by name so a typo is an error
// rather than a silently ignored setting.
import { GuardConfigError, SETTINGS, type GuardMode } from '@mate-guard/core';

/** `guardAlloc(options)`: defaults that MATE_VITEST_GUARD_* and the guard flags override. */
export interface GuardAllocOptions {
  /** Turn guarding on (default false: the plugin only makes it available). */
  enabled?: boolean;
  /** `tail` (default): overruns fault; `head`: underruns fault. */
  mode?: GuardMode;
  /** One `[mate-guard]` line per guarded allocation and free. */
  logAllocations?: boolean;
}

export const OPTION_SOURCE = 'guardAlloc() options';

export function checkOptionNames(options: unknown): Readonly<Record<string, unknown>> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new GuardConfigError(`${OPTION_SOURCE}: ${JSON.stringify(options)} is not an options object`);
  }
  const known = SETTINGS.map((row) => row.key as string);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new GuardConfigError(`${OPTION_SOURCE}: unknown option ${JSON.stringify(key)}; known: ${known.join(', ')}`);
    }
  }
  return options as Record<string, unknown>;
}
