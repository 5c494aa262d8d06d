// How Mocha's config (.mocharc.*, package.json "mocha") spells a setting:
// the flag without its dashes (`guard-mode`), as Mocha reads its rc keys.
import type { OptionSpelling, SettingRow } from '@mate-guard/core/internal';

/** `guard-mode` for the setting named `mode`. */
export const rcKey = (row: SettingRow): string => `guard-${row.name}`;

export const mochaSpelling: OptionSpelling = { name: rcKey, ours: (name) => name.startsWith('guard-') };
