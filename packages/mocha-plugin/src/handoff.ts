// The main process resolves the settings once (it alone sees the command
// line) and hands them to --parallel workers, which inherit its env at fork.
import type { RunnerGuardSettings } from '@mate-guard/core';

/** Internal: the resolved settings as JSON, for this run's workers only. */
export const HANDOFF_ENV = 'MATE_GUARD_MOCHA_SETTINGS';
/** Internal: set by mate-mocha, which then owns the report dir and the summary. */
export const WATCHED_ENV = 'MATE_GUARD_MOCHA_WATCHED';

export function writeHandoff(settings: RunnerGuardSettings, env: NodeJS.ProcessEnv = process.env): void {
  env[HANDOFF_ENV] = JSON.stringify(settings);
}

export function readHandoff(env: NodeJS.ProcessEnv = process.env): RunnerGuardSettings | undefined {
  const raw = env[HANDOFF_ENV];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<RunnerGuardSettings>;
    if (typeof v.enabled === 'boolean' && (v.mode === 'tail' || v.mode === 'head') && typeof v.logAllocations === 'boolean') {
      return { enabled: v.enabled, mode: v.mode, logAllocations: v.logAllocations };
    }
  } catch {
    // fall through: only the plugin writes it
  }
  throw new Error(`mate-guard: ${HANDOFF_ENV} is internal to @mate-guard/mocha and holds ${JSON.stringify(raw)}`);
}
