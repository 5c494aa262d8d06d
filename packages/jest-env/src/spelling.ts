// How Jest's config spells a setting: `testEnvironmentOptions` and the
// reporter's options name it `guard<Name>` (`guardMode`, `guardLogAllocations`).
import type { OptionSpelling, SettingRow } from '@mate-guard/core/internal';

const pascal = (name: string): string => name.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());

/** `guardMode` for the setting named `mode`. */
export const jestOptionName = (row: SettingRow): string => `guard${pascal(row.name)}`;

export const jestSpelling: OptionSpelling = { name: jestOptionName, ours: (name) => /^guard[A-Z]/.test(name) };
