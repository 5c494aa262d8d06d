// The options `guardAlloc()` takes: the runner settings by their internal
// names, checked by name so a typo is an error rather than ignored.
import type { GuardSettings, RunnerSettingKey } from '@mate-guard/core/internal';

/** `guardAlloc(options)`: defaults that MATE_VITEST_GUARD_* and the guard flags override (`enabled` turns guarding on). */
export type GuardAllocOptions = Partial<Pick<GuardSettings, RunnerSettingKey>>;

export const OPTION_SOURCE = 'guardAlloc() options';
