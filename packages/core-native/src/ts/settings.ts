// Runner settings, declared once: each row yields the flag (and Mocha rc
// key), the MATE_<RUNNER>_* environment variable, the option names the
// plugins accept, the parser, and the `--help` / README text.
import { GuardConfigError } from './errors';
import { parseBoolean, parseChoice, parseList, show } from './values';

export type GuardMode = 'tail' | 'head';
export const GUARD_MODES: readonly GuardMode[] = ['tail', 'head'];

export type RunnerName = 'vitest' | 'jest' | 'mocha';

/** What a runner plugin resolved: whether guarding is on, and how. */
export interface RunnerGuardSettings {
  enabled: boolean;
  mode: GuardMode;
  logAllocations: boolean;
}

type Kind = 'boolean' | 'mode';

interface SettingRow<K extends keyof RunnerGuardSettings> {
  key: K;
  kind: Kind;
  flag: string;        // --guard-alloc; also the Mocha rc key
  env: string;         // suffix after MATE_<RUNNER>_
  option: string;      // Jest testEnvironmentOptions key
  negatable: boolean;  // --no-<flag>
  default: RunnerGuardSettings[K];
  description: string;
}

export const SETTINGS: readonly SettingRow<keyof RunnerGuardSettings>[] = [
  {
    key: 'enabled', kind: 'boolean', flag: 'guard-alloc', env: 'GUARD_ALLOC', option: 'guardAlloc',
    negatable: true, default: false,
    description: 'Back JS buffers with guard-page allocations and check canaries after every test.',
  },
  {
    key: 'mode', kind: 'mode', flag: 'guard-mode', env: 'GUARD_MODE', option: 'guardMode',
    negatable: false, default: 'tail',
    description: 'tail: guard page after the end (overruns fault); head: before the start (underruns fault).',
  },
  {
    key: 'logAllocations', kind: 'boolean', flag: 'guard-log-allocations', env: 'GUARD_LOG_ALLOCATIONS',
    option: 'guardLogAllocations', negatable: true, default: false,
    description: 'Print one [mate-guard] line per guarded allocation and free.',
  },
];

export function envName(runner: RunnerName, row: { env: string }): string {
  return `MATE_${runner.toUpperCase()}_${row.env}`;
}

function parseValue(row: SettingRow<keyof RunnerGuardSettings>, value: unknown, where: string): boolean | GuardMode {
  return row.kind === 'boolean' ? parseBoolean(value, where) : parseChoice(value, GUARD_MODES, where, 'guard mode');
}

export interface ParsedFlags {
  /** Settings the command line set. */
  settings: Partial<RunnerGuardSettings>;
  /** argv with every guard flag (and its value) removed. */
  rest: string[];
}

/**
 * Pulls the guard flags out of an argument list. `spaceValues: false` is for
 * plain Mocha, which would already have taken `--guard-mode tail`'s value as
 * a spec file: such a flag is an error there, with the `=` form suggested.
 */
export function parseGuardFlags(argv: readonly string[], spaceValues = true): ParsedFlags {
  const settings: Partial<RunnerGuardSettings> = {};
  const rest: string[] = [];
  const set = (row: SettingRow<keyof RunnerGuardSettings>, value: boolean | GuardMode) => {
    (settings as Record<string, unknown>)[row.key] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const m = /^--(no-)?([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const row = m ? SETTINGS.find((r) => r.flag === m[2]) : undefined;
    if (!m || !row) {
      rest.push(arg);
      continue;
    }
    const [, no, name, inline] = m;
    const where = `--${no ?? ''}${name}`;
    if (no) {
      if (!row.negatable) throw new GuardConfigError(`${where}: there is no negative form of --${name}`);
      if (inline !== undefined) throw new GuardConfigError(`${where} takes no value (got ${show(inline)})`);
      set(row, false);
    } else if (inline !== undefined) {
      set(row, parseValue(row, inline, `--${name}`));
    } else if (row.kind === 'boolean') {
      set(row, true);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) {
        throw new GuardConfigError(`--${name} needs a value: ${GUARD_MODES.join(' or ')} (e.g. --${name}=tail)`);
      }
      if (!spaceValues) {
        throw new GuardConfigError(
          `--${name} ${next}: plain mocha takes "${next}" for a spec file; write --${name}=${next} (or use mate-mocha)`,
        );
      }
      set(row, parseValue(row, next, `--${name}`));
      i++;
    }
  }
  return { settings, rest };
}

export interface ResolveInput {
  runner: RunnerName;
  /** Command-line arguments that may hold guard flags. */
  argv?: readonly string[];
  /** Allow `--guard-mode tail` with a space (false for plain mocha). */
  spaceValues?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Plugin or config options, keyed by `optionNaming`. */
  options?: Readonly<Record<string, unknown>>;
  /** How `options` names settings: 'key' (enabled/mode/...), 'option' (guardAlloc/...), 'flag' (guard-alloc/...). */
  optionNaming?: 'key' | 'option' | 'flag';
  /** Names the options' source in errors, e.g. `guardAlloc() options`. */
  optionSource?: string;
}

/**
 * The one config resolver: command-line flag > MATE_<RUNNER>_GUARD_* >
 * plugin/config options > off. Throws GuardConfigError naming the flag,
 * variable or option and the bad value.
 */
export function resolveGuardSettings(input: ResolveInput): RunnerGuardSettings {
  const env = input.env ?? process.env;
  const fromFlags = parseGuardFlags(input.argv ?? [], input.spaceValues ?? true).settings;
  const naming = input.optionNaming ?? 'key';
  const out = {} as Record<string, unknown>;
  for (const row of SETTINGS) {
    const name = envName(input.runner, row);
    const optName = row[naming];
    const optValue = input.options?.[optName];
    let value: unknown = row.default;
    if (optValue !== undefined) value = parseValue(row, optValue, `${input.optionSource ?? 'option'} ${optName}`);
    const envValue = env[name];
    if (envValue !== undefined && envValue !== '') value = parseValue(row, envValue, name);
    if (fromFlags[row.key] !== undefined) value = fromFlags[row.key];
    out[row.key] = value;
  }
  return out as unknown as RunnerGuardSettings;
}

/** Lines for a CLI's --help. */
export function describeFlags(runner: RunnerName): string[] {
  return SETTINGS.map((row) => {
    const flag = row.kind === 'boolean' ? `--${row.flag}${row.negatable ? `, --no-${row.flag}` : ''}` : `--${row.flag} <${GUARD_MODES.join('|')}>`;
    return `  ${flag.padEnd(48)} ${row.description} (env ${envName(runner, row)}, default ${String(row.default)})`;
  });
}
