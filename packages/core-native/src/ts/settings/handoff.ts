// The one handoff: the process that starts a run resolves the settings once
// and hands the result, as one JSON environment variable, to every worker
// and child process (runner workers, guard-run's children). They read it;
// they never resolve again.
import { GuardConfigError } from '../errors';
import { SETTINGS, type GuardSettings, type SettingKey, type SettingRow } from './table';

export const HANDOFF_ENV = 'MATE_GUARD_SETTINGS';
export const HANDOFF_VERSION = 1;
const VERSION = HANDOFF_VERSION;

export interface Handoff {
  settings: GuardSettings;
  /** Keys a flag or MATE_<RUNNER>_GUARD_* set: per-file options (Jest) rank below them. */
  explicit: SettingKey[];
  /** The process that owns the run: it prints the summary and names crashed tests. */
  ownerPid?: number;
  /** Set by `mate guard-run`: every Node process installs the allocator at start. */
  autoInstall?: boolean;
}

export function writeHandoff(handoff: Handoff, env: NodeJS.ProcessEnv = process.env): void {
  env[HANDOFF_ENV] = JSON.stringify({ version: VERSION, ...handoff });
}

function invalid(raw: string, why: string): GuardConfigError {
  return new GuardConfigError(`${HANDOFF_ENV} is internal to mate-guard and holds ${JSON.stringify(raw)}: ${why}`);
}

/** The handoff in this process's environment, or undefined. */
export function readHandoff(env: NodeJS.ProcessEnv = process.env): Handoff | undefined {
  const raw = env[HANDOFF_ENV];
  if (!raw) return undefined;
  let parsed: {
    version?: unknown;
    settings?: Record<string, unknown>;
    explicit?: unknown;
    ownerPid?: unknown;
    autoInstall?: unknown;
  };
  try {
    parsed = JSON.parse(raw) as typeof parsed;
  } catch {
    throw invalid(raw, 'not JSON');
  }
  if (parsed.version !== VERSION || typeof parsed.settings !== 'object' || parsed.settings === null) {
    throw invalid(raw, `not a version ${VERSION} handoff (a different mate-guard started this run?)`);
  }
  // Written by our own writeHandoff from parsed values: the row parsers only
  // confirm that, so a stale or foreign value cannot slip through.
  const settings: Record<string, unknown> = {};
  for (const row of SETTINGS as readonly SettingRow[]) {
    const v = parsed.settings[row.key];
    settings[row.key] = v === undefined || v === null ? row.default : row.value.parse(v, `${HANDOFF_ENV} ${row.key}`);
  }
  const keys = new Set<string>(SETTINGS.map((r) => r.key));
  const explicit = Array.isArray(parsed.explicit)
    ? parsed.explicit.filter((k): k is SettingKey => typeof k === 'string' && keys.has(k))
    : [];
  return {
    settings: settings as GuardSettings,
    explicit,
    ...(typeof parsed.ownerPid === 'number' ? { ownerPid: parsed.ownerPid } : {}),
    ...(parsed.autoInstall === true ? { autoInstall: true } : {}),
  };
}
