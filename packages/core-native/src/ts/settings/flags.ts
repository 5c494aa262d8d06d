// Command-line flags of the settings table, for runner CLIs (`--guard-mode`)
// and `mate guard-run` (`--mode`): one parser, run once per process that
// starts a run.
import { GuardConfigError } from '../errors';
import { rowsOn, spell, type GuardSettings, type SettingRow } from './table';
import { suggestion } from './suggest';
import { show } from './values';

export interface ParsedFlags {
  /** The settings the command line set, parsed. */
  values: Partial<GuardSettings>;
  /** The arguments that are not guard flags, in order (from a `--` on, untouched). */
  rest: string[];
  /** The guard flags as given (with their values), in order. */
  taken: string[];
}

export interface FlagSyntax {
  rows: readonly SettingRow[];
  flagOf: (row: SettingRow) => string;
  /**
   * `--guard-mode tail` with a space. False for plain mocha, which has
   * already taken `tail` for a spec file: an error there, suggesting `=`.
   */
  spaceValues: boolean;
  /**
   * Words that are ours even when no row has them: a misspelling
   * (`--guard-mod`) is an error naming the closest flag, never passed on
   * to the runner (which may ignore it, or take it for a file).
   */
  ours: RegExp;
  /** Flags of ours that are not settings (`--help`), for suggestions. */
  others?: readonly string[];
}

export const RUNNER_FLAGS: FlagSyntax = {
  rows: rowsOn('runner'),
  flagOf: spell.runnerFlag,
  spaceValues: true,
  ours: /^--(no-)?guard-/,
};
export const GUARD_RUN_FLAGS: FlagSyntax = {
  rows: rowsOn('guardRun'),
  flagOf: spell.guardRunFlag,
  spaceValues: true,
  ours: /^--[a-z]/,
  others: ['--help'],
};

/** Every spelling of the syntax's flags, `--no-` forms included. */
function knownFlags(syntax: FlagSyntax): string[] {
  const out: string[] = [];
  for (const r of syntax.rows) {
    const flag = syntax.flagOf(r);
    out.push(flag);
    if (r.value.placeholder === undefined) out.push(`--no-${flag.slice(2)}`);
  }
  return [...out, ...(syntax.others ?? [])];
}

/** The error for a word that looks like one of our flags but is none. */
function unknownFlag(arg: string, syntax: FlagSyntax): GuardConfigError {
  const name = arg.replace(/=.*$/s, '');
  return new GuardConfigError(`unknown option ${show(name)}${suggestion(name, knownFlags(syntax))}`);
}

/** The flag and its row for one argument, or undefined when it is not one of ours. */
function match(arg: string, syntax: FlagSyntax): { row: SettingRow; negated: boolean; inline?: string } | undefined {
  const m = /^--(no-)?([a-z][a-z-]*)(?:=(.*))?$/s.exec(arg);
  if (!m) return undefined;
  const [, no, name, inline] = m;
  const row = syntax.rows.find((r) => syntax.flagOf(r) === `--${name}`);
  return row ? { row, negated: no !== undefined, inline } : undefined;
}

/** Takes the guard flags out of `argv`; everything else stays in `rest`. */
export function parseFlags(argv: readonly string[], syntax: FlagSyntax): ParsedFlags {
  const values: Record<string, unknown> = {};
  const rest: string[] = [];
  const taken: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const hit = match(arg, syntax);
    if (!hit) {
      if (syntax.ours.test(arg)) throw unknownFlag(arg, syntax);
      rest.push(arg);
      continue;
    }
    const { row, negated, inline } = hit;
    const flag = syntax.flagOf(row);
    const isBoolean = row.value.placeholder === undefined;
    let value: unknown;
    if (negated) {
      if (!isBoolean) throw new GuardConfigError(`--no-${flag.slice(2)}: there is no negative form of ${flag}`);
      if (inline !== undefined)
        throw new GuardConfigError(`--no-${flag.slice(2)} takes no value (got ${show(inline)})`);
      value = false;
    } else if (inline !== undefined) {
      value = row.value.parse(inline, flag);
    } else if (isBoolean) {
      value = true;
    } else {
      const next = argv[i + 1];
      // A negative number is this flag's value (one its parser names as not allowed), not the next option.
      if (next === undefined || (next.startsWith('-') && !/^-\d/.test(next))) {
        throw new GuardConfigError(`${flag} needs a value: ${row.value.hint} (e.g. ${flag}=${exampleValue(row)})`);
      }
      if (!syntax.spaceValues) {
        throw new GuardConfigError(
          `${flag} ${next}: plain mocha takes "${next}" for a spec file; write ${flag}=${next} (or use mate-mocha)`,
        );
      }
      value = row.value.parse(next, flag);
      taken.push(arg);
      arg = next;
      i++;
    }
    taken.push(arg);
    if (row.value.repeatable && Array.isArray(values[row.key]) && Array.isArray(value)) {
      values[row.key] = [...(values[row.key] as unknown[]), ...value];
    } else {
      values[row.key] = value;
    }
  }
  return { values: values as Partial<GuardSettings>, rest, taken };
}

function exampleValue(row: SettingRow): string {
  const d = row.default;
  return typeof d === 'string' || typeof d === 'number' ? String(d) : (row.value.placeholder ?? '');
}
