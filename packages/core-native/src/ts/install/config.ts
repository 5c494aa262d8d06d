// installGuardAllocator's config: the settings table's API rows, checked by
// name, each value parsed by its row.
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { refuseWithoutDevice } from '../settings/device-only';
import { defaultSettings, rowsOn, type AllocatorSettingKey, type GuardSettings } from '../settings/table';
import { show } from '../settings/values';
import { ownReportDir } from '../run/private-files';

/** What installGuardAllocator takes: any of the allocator settings (`mate options` lists them). */
export type GuardAllocatorConfig = Partial<Pick<GuardSettings, AllocatorSettingKey>>;
/** The config in force: every allocator setting, defaults filled in. */
export type ResolvedGuardConfig = Pick<GuardSettings, AllocatorSettingKey> & { reportDir: string };

/**
 * Where an allocator writes its events: the directory given (a run's, or
 * $MATE_GUARD_REPORT_DIR, read by the table), else, outside any run, a
 * fresh folder of this process's own under `<tmp>/mate-guard-<uid>/`.
 */
const reportDirOf = (dir: string | undefined): string => (dir === undefined ? ownReportDir() : path.resolve(dir));

export function resolveAllocatorConfig(
  config: GuardAllocatorConfig = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedGuardConfig {
  if (config === null || typeof config !== 'object') {
    throw new GuardConfigError(`installGuardAllocator: ${show(config)} is not a config object`);
  }
  const rows = rowsOn('api');
  const names = rows.map((r) => r.key);
  for (const key of Object.keys(config)) {
    if (!names.includes(key)) {
      throw new GuardConfigError(
        `installGuardAllocator: unknown option ${JSON.stringify(key)}; known: ${names.join(', ')}`,
      );
    }
  }
  const defaults = defaultSettings(env) as Record<string, unknown>;
  const given = config as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const r of rows) out[r.key] = given[r.key] === undefined ? defaults[r.key] : r.value.parse(given[r.key], r.key);
  refuseWithoutDevice(out as Partial<GuardSettings>, [
    { values: config, where: (r) => `installGuardAllocator ${r.key}`, device: "device: 'cuda'" },
  ]);
  out.reportDir = reportDirOf(out.reportDir as string | undefined);
  return out as ResolvedGuardConfig;
}

/** The allocator settings of a runner's resolved settings. */
export function allocatorConfigOf(settings: GuardSettings): ResolvedGuardConfig {
  const out: Record<string, unknown> = {};
  for (const r of rowsOn('api')) out[r.key] = (settings as Record<string, unknown>)[r.key];
  out.reportDir = reportDirOf(settings.reportDir);
  return out as ResolvedGuardConfig;
}

export function sameConfig(a: ResolvedGuardConfig, b: ResolvedGuardConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
