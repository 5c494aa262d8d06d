// How the Jest side resolves its settings with core's one resolver. The
// mate-jest CLI strips guard flags before Jest sees them ("Unrecognized CLI
// Parameter" otherwise) and hands them to every worker through one internal
// variable, so the environment can still rank them above MATE_JEST_GUARD_*.
import { resolveGuardSettings, type RunnerGuardSettings } from '@mate-guard/core';

/** Internal: the guard flags mate-jest was given, as a JSON array of arguments. */
export const FLAGS_ENV = 'MATE_GUARD_JEST_ARGV';

function flagsFromEnv(env: NodeJS.ProcessEnv): string[] {
  const raw = env[FLAGS_ENV];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed as string[];
  } catch {
    // fall through: mate-jest always writes valid JSON, so this is tampering
  }
  throw new Error(`mate-guard: ${FLAGS_ENV} is internal to mate-jest and holds ${JSON.stringify(raw)}, not a JSON list of flags`);
}

/**
 * flag (via mate-jest) > MATE_JEST_GUARD_* > testEnvironmentOptions (the
 * config's, with a file's `@jest-environment-options` docblock merged in by
 * Jest) > off.
 */
export function resolveJestSettings(
  options: Readonly<Record<string, unknown>> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): RunnerGuardSettings {
  return resolveGuardSettings({
    runner: 'jest',
    argv: flagsFromEnv(env),
    env,
    options: options ?? {},
    optionNaming: 'option',
    optionSource: 'testEnvironmentOptions',
  });
}
