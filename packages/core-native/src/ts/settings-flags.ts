// Resolved or parsed settings written back as canonical flags, for drop-in
// CLIs that hand them on to the real runner (always the `=` form, which
// every runner's parser reads the same way).
import { SETTINGS, type RunnerGuardSettings } from './settings';

export function settingsToFlags(settings: Partial<RunnerGuardSettings>): string[] {
  const out: string[] = [];
  for (const row of SETTINGS) {
    const value = settings[row.key];
    if (value === undefined) continue;
    if (typeof value === 'boolean') out.push(value ? `--${row.flag}` : `--no-${row.flag}`);
    else out.push(`--${row.flag}=${value}`);
  }
  return out;
}
