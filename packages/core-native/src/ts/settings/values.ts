// Parsing of the value kinds that flags, environment variables and options
// share, with one wording for every error.
import { GuardConfigError } from './errors';

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

export const BOOLEAN_WORDS = '1/true/yes/on or 0/false/no/off';

/** `where` names the source, e.g. `MATE_VITEST_GUARD_ALLOC` or `--guard-alloc`. */
export function parseBoolean(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
  }
  throw new GuardConfigError(`${where}: ${show(value)} is not a boolean; use ${BOOLEAN_WORDS}`);
}

export function parseChoice<T extends string>(value: unknown, choices: readonly T[], where: string, what: string): T {
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    const hit = choices.find((c) => c === v);
    if (hit) return hit;
  }
  throw new GuardConfigError(`${where}: ${show(value)} is not a ${what}; use ${choices.join(' or ')}`);
}

export function parseList(value: unknown, where: string): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.filter((v) => v.length > 0);
  if (typeof value === 'string') return value.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
  throw new GuardConfigError(`${where}: ${show(value)} is not a list; use comma-separated globs or an array of strings`);
}

export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
