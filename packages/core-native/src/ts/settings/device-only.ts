// Settings that act only with the device guard (rows with `needsDevice`):
// one given without it would do nothing, and the user would believe
// launches block or inputs are saved. Refused like a bad value, naming the
// flag, variable or option as the user wrote it.
//
// Refused: a value that asks the device guard for something, i.e. one off
// the row's default that is not a boolean turned off. A value at its
// default asks for nothing, and `mate replay` and the runners hand on every
// setting, defaults too. A boolean turned off (`--no-track-launches`,
// `--no-sync-on-free`) asks for what a run without the device guard does
// anyway (nothing tracked, no free waits), so a CI config that turns
// tracking off everywhere still runs its CPU-only jobs. The Python package
// applies the same rule (_settings.py).
import { GuardConfigError } from '../errors';
import { SETTINGS, type GuardSettings, type SettingRow } from './table';

/** Settings one source gave, and how that source spells a row (for errors). */
export interface SpelledLayer {
  values: Partial<GuardSettings>;
  /** `--guard-launch-blocking`, `MATE_JEST_GUARD_LAUNCH_BLOCKING`, `testEnvironmentOptions guardLaunchBlocking` */
  where: (row: SettingRow) => string;
  /** How this source turns the device guard on: `--guard-device cuda`, `device: 'cuda'`. */
  device: string;
}

const DEVICE_ONLY = (SETTINGS as readonly SettingRow[]).filter((r) => r.needsDevice);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Throws for the first device-only setting of `settings` (the values in
 * force) that asks for something (above) while their device is unset. `sources`
 * go highest rank first: the one named is the one whose value is in force.
 */
export function refuseWithoutDevice(settings: Partial<GuardSettings>, sources: readonly SpelledLayer[]): void {
  if (settings.device !== undefined) return;
  for (const row of DEVICE_ONLY) {
    const value = (settings as Record<string, unknown>)[row.key];
    if (value === false || same(value, row.default)) continue;
    const source = sources.find((s) => (s.values as Record<string, unknown>)[row.key] !== undefined);
    if (!source) continue;
    throw new GuardConfigError(
      `${source.where(row)}: needs the device guard (${source.device}); without it no CUDA memory is guarded and the setting would do nothing`,
    );
  }
}
