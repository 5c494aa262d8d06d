// The one resolver: flag > MATE_<RUNNER>_GUARD_* > plugin/config options >
// defaults. Each source is parsed once, into a layer; the layers are laid
// over the defaults. Throws GuardConfigError naming the flag, variable or
// option and the bad value, or a CUDA setting given without the device
// guard (device-only.ts).
import { GuardConfigError } from '../errors';
import { refuseWithoutDevice, type SpelledLayer } from './device-only';
import { suggestion } from './suggest';
import {
  defaultSettings,
  rowsOn,
  SETTINGS,
  spell,
  type GuardSettings,
  type RunnerName,
  type SettingKey,
  type SettingRow,
} from './table';

export type Layer = Partial<GuardSettings>;

const DEVICE = (SETTINGS as readonly SettingRow[]).find((r) => r.key === 'device')!;

/**
 * Names in `names` that look like ours (`ours`) but name no setting are
 * typos: an error naming the word and the closest setting, as for flags.
 */
function refuseUnknown(
  names: Iterable<string>,
  ours: (name: string) => boolean,
  known: readonly string[],
  what: string,
): void {
  for (const name of names) {
    if (ours(name) && !known.includes(name))
      throw new GuardConfigError(`${what} ${JSON.stringify(name)}${suggestion(name, known)}`);
  }
}

/** The runner settings MATE_<RUNNER>_GUARD_* set (empty values count as unset). */
function readRunnerEnv(runner: RunnerName, env: NodeJS.ProcessEnv = process.env): Layer {
  const rows = rowsOn('runner');
  const prefix = `${spell.envPrefix(runner)}GUARD_`;
  refuseUnknown(
    Object.keys(env),
    (n) => n.startsWith(prefix),
    rows.map((r) => spell.env(runner, r)),
    'unknown environment variable',
  );
  const out: Record<string, unknown> = {};
  for (const row of rows) {
    const name = spell.env(runner, row);
    const value = env[name];
    if (value !== undefined && value !== '') out[row.key] = row.value.parse(value, name);
  }
  return out as Layer;
}

/**
 * How a runner's options object names settings: said by the runner's
 * package (its adapter's `spelling`), never by core.
 */
export interface OptionSpelling {
  /** The name of `row` in the options object (`guardMode`, `guard-mode`). */
  name: (row: SettingRow) => string;
  /** Whether a name is spelled like ours: such a name that names no setting is a typo, refused. */
  ours: (name: string) => boolean;
}

/** Settings named by their keys (`mode`), in an object that is ours alone (checkOptionNames refuses the rest). */
export const BY_KEY: OptionSpelling = { name: (row) => row.key, ours: () => false };

/**
 * The runner settings an options object sets (Vitest's guardAlloc(), Jest's
 * testEnvironmentOptions, Mocha's rc keys). Other keys are left alone: they
 * belong to the runner. `source` names the object in errors.
 */
export function readOptions(
  options: Readonly<Record<string, unknown>> | undefined,
  spelling: OptionSpelling,
  source: string,
): Layer {
  const rows = rowsOn('runner');
  // Keys spelled like ours (guardX, guard-x) that name no setting are typos.
  refuseUnknown(Object.keys(options ?? {}), spelling.ours, rows.map(spelling.name), `${source}: unknown option`);
  const out: Record<string, unknown> = {};
  for (const row of rows) {
    const name = spelling.name(row);
    const value = options?.[name];
    if (value !== undefined) out[row.key] = row.value.parse(value, `${source} ${name}`);
  }
  return out as Layer;
}

/** Throws for keys of `options` that are not runner settings (for option objects that are ours alone). */
export function checkOptionNames(options: unknown, source: string): Readonly<Record<string, unknown>> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new GuardConfigError(`${source}: ${JSON.stringify(options)} is not an options object`);
  }
  refuseUnknown(
    Object.keys(options),
    () => true,
    rowsOn('runner').map((r) => r.key),
    `${source}: unknown option`,
  );
  return options as Record<string, unknown>;
}

/** The layers over the defaults, lowest first. */
export function resolveLayers(layers: readonly Layer[], env: NodeJS.ProcessEnv = process.env): GuardSettings {
  return Object.assign(defaultSettings(env), ...layers) as GuardSettings;
}

export interface RunnerResolution {
  settings: GuardSettings;
  /** Keys set by a flag or the environment: options a worker reads later rank below them. */
  explicit: SettingKey[];
}

interface RunnerSources {
  runner: RunnerName;
  /** Flags, already parsed (parseFlags). */
  flags?: Layer;
  env?: NodeJS.ProcessEnv;
  /** Options as given; parsed after the environment, so errors come flag, env, options. */
  options?: RawOptions;
}

export interface RawOptions {
  values: Readonly<Record<string, unknown>> | undefined;
  /** How the object names settings (the runner's adapter says). */
  spelling: OptionSpelling;
  /** Names the object in errors: `guardAlloc() options`, `testEnvironmentOptions`. */
  source: string;
}

/** flag > MATE_<RUNNER>_GUARD_* > options > defaults; the environment is checked even when a flag wins. */
export function resolveRunnerSettings(sources: RunnerSources): RunnerResolution {
  const env = sources.env ?? process.env;
  const fromEnv = readRunnerEnv(sources.runner, env);
  const flags = sources.flags ?? {};
  const o = sources.options;
  const fromOptions = o ? readOptions(o.values, o.spelling, o.source) : {};
  const explicit = [...new Set([...Object.keys(fromEnv), ...Object.keys(flags)])] as SettingKey[];
  const settings = resolveLayers([fromOptions, fromEnv, flags], env);
  // Asking for a device (`--guard-device cuda`) turns guarding on, unless a
  // source says otherwise (`--no-guard-alloc`).
  const enabledSet = [fromOptions, fromEnv, flags].some((l) => l.enabled !== undefined);
  if (settings.device !== undefined && !enabledSet) settings.enabled = true;
  refuseWithoutDevice(settings, [
    { values: flags, where: spell.runnerFlag, device: `${spell.runnerFlag(DEVICE)} cuda` },
    {
      values: fromEnv,
      where: (r) => spell.env(sources.runner, r),
      device: `${spell.env(sources.runner, DEVICE)}=cuda`,
    },
    ...(o ? [optionsLayer(fromOptions, o)] : []),
  ]);
  return { settings, explicit };
}

/** An options object's settings, spelled as the object spells them, for refuseWithoutDevice. */
export function optionsLayer(values: Layer, o: Pick<RawOptions, 'spelling' | 'source'>): SpelledLayer {
  return {
    values,
    where: (r) => `${o.source} ${o.spelling.name(r)}`,
    device: `${o.spelling.name(DEVICE)}: 'cuda'`,
  };
}
