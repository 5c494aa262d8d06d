// The kinds of value a setting can take. Each kind parses flags,
// environment variables and options alike, with one wording for every
// error: `<where>: <value> is not ...; use ...`.
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { visible } from '../text/escape';

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

const BOOLEAN_WORDS = '1/true/yes/on or 0/false/no/off';

/** A value as an error quotes it: JSON, with what a terminal would obey spelled out (JSON leaves C1 controls and bidi marks raw). */
export function show(value: unknown): string {
  if (typeof value === 'string') return visible(JSON.stringify(value));
  if (value === undefined) return 'undefined';
  try {
    return visible(JSON.stringify(value) ?? String(value));
  } catch {
    return visible(String(value));
  }
}

/** How one kind of value is parsed and documented. */
export interface ValueKind<T> {
  /** `where` names the source in errors: `--guard-mode`, `MATE_VITEST_GUARD_ALLOC`, `alignment`. */
  parse(value: unknown, where: string): T;
  /** What is allowed, for docs. */
  readonly allowed: string;
  /** What is allowed, for an error about a missing value (`tail or head`). */
  readonly hint: string;
  /** The value placeholder of a flag (`<tail|head>`); none for booleans, which take no value. */
  readonly placeholder?: string;
  /** A flag given twice adds to the list instead of replacing it. */
  readonly repeatable?: boolean;
  /** The kind in plain data, for settings.json (the Python package parses by it). */
  readonly spec: ValueSpec;
}

/** A value kind as data: what settings.json says of each setting's values. */
export type ValueSpec =
  | { type: 'boolean' }
  | { type: 'choice'; choices: readonly string[]; what: string }
  | { type: 'integer'; min: number; max: number; powerOfTwo: boolean }
  | { type: 'list'; item: string }
  | { type: 'text'; what: string }
  | { type: 'path'; what: string }
  | { type: 'file'; what: string };

function parseBoolean(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
  }
  throw new GuardConfigError(`${where}: ${show(value)} is not a boolean; use ${BOOLEAN_WORDS}`);
}

export const booleanValue: ValueKind<boolean> = {
  parse: parseBoolean,
  allowed: 'boolean',
  hint: BOOLEAN_WORDS,
  spec: { type: 'boolean' },
};

/** One of a few words; `what` names the kind in errors (`guard mode`). */
export function choiceValue<T extends string>(choices: readonly T[], what: string): ValueKind<T> {
  return {
    parse(value, where) {
      if (typeof value === 'string') {
        const v = value.trim().toLowerCase();
        const hit = choices.find((c) => c === v);
        if (hit) return hit;
      }
      throw new GuardConfigError(`${where}: ${show(value)} is not a ${what}; use ${choices.join(' or ')}`);
    },
    allowed: choices.map((c) => `'${c}'`).join(' or '),
    hint: choices.join(' or '),
    placeholder: `<${choices.join('|')}>`,
    spec: { type: 'choice', choices, what },
  };
}

/** An integer in [min, max], optionally a power of two; strings (flags, env) are read as numbers. */
export function integerValue(min: number, max: number, powerOfTwo = false): ValueKind<number> {
  return {
    parse(value, where) {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
        throw new GuardConfigError(`${where}: ${show(value)} is not allowed; use an integer from ${min} to ${max}`);
      }
      if (powerOfTwo && (n & (n - 1)) !== 0) {
        throw new GuardConfigError(`${where}: ${show(value)} is not allowed; use a power of two from ${min} to ${max}`);
      }
      return n;
    },
    allowed: powerOfTwo ? `a power of two ${min}..${max}` : `integer ${min}..${max}`,
    hint: powerOfTwo ? `a power of two from ${min} to ${max}` : `an integer from ${min} to ${max}`,
    placeholder: '<n>',
    spec: { type: 'integer', min, max, powerOfTwo },
  };
}

/** Globs: an array of strings, or one comma-separated string (env); a flag may repeat. */
export function listValue(item: string): ValueKind<string[]> {
  return {
    parse(value, where) {
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.filter((v) => v.length > 0);
      if (typeof value === 'string')
        return value
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v.length > 0);
      throw new GuardConfigError(
        `${where}: ${show(value)} is not a list; use comma-separated ${item}s or an array of strings`,
      );
    },
    allowed: `${item}s (comma-separated in the environment)`,
    hint: `a ${item}`,
    placeholder: `<${item}>`,
    repeatable: true,
    spec: { type: 'list', item },
  };
}

/** One non-empty word or pattern (a kernel glob), kept as given: commas are part of it (C++ template names have them). */
export function textValue(what: string): ValueKind<string> {
  return {
    parse(value, where) {
      if (typeof value !== 'string' || value.trim() === '')
        throw new GuardConfigError(`${where}: ${show(value)} is not a ${what}; use a non-empty ${what}`);
      return value.trim();
    },
    allowed: `a ${what}`,
    hint: `a ${what}`,
    placeholder: `<${what.replace(/ /g, '-')}>`,
    spec: { type: 'text', what },
  };
}

/** A file system path, kept as given (the caller resolves it where it is used). */
export function pathValue(what: string): ValueKind<string> {
  return {
    parse(value, where) {
      if (typeof value !== 'string' || value === '')
        throw new GuardConfigError(`${where}: ${show(value)} is not a ${what} path`);
      return value;
    },
    allowed: `a ${what} path`,
    hint: `a ${what} path`,
    placeholder: `<${what}>`,
    spec: { type: 'path', what },
  };
}

/**
 * A file that must exist and be valid now (`check` throws GuardConfigError
 * naming the file and line): resolved to an absolute path, so that workers
 * with another working directory read the same file.
 */
export function fileValue(what: string, check: (file: string) => void): ValueKind<string | undefined> {
  return {
    parse(value, where) {
      if (typeof value !== 'string' || value === '')
        throw new GuardConfigError(`${where}: ${show(value)} is not a ${what} path`);
      const file = path.resolve(value);
      try {
        check(file);
      } catch (err) {
        if (err instanceof GuardConfigError) throw new GuardConfigError(`${where}: ${err.message}`);
        throw err;
      }
      return file;
    },
    allowed: `a ${what} path`,
    hint: `a ${what} path`,
    placeholder: '<file>',
    spec: { type: 'file', what },
  };
}
