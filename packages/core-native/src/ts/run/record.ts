// What a run ran, kept in its report directory (`replay.json`) for `mate
// replay <dir>`: the command line of the process that started the run
// (its Node options too), its working directory, the runner and the
// settings it handed its processes (and each project's own, where projects
// guard with settings of their own). The failing tests are the directory's
// violation events themselves.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { visible } from '../text/escape';
import type { Handoff } from '../settings/handoff';
import { SETTINGS, type GuardSettings, type SettingKey, type SettingRow } from '../settings/table';
import { writeNewFile, writeWholeFile } from './private-files';

export const RECORD_FILE = 'replay.json';
const VERSION = 1;

export interface RunRecord {
  tool: 'mate-guard';
  version: number;
  /** `vitest`, `jest`, `mocha`, `node-test`, or `run` (mate guard-run). */
  runner: string;
  cwd: string;
  /** The starting process's Node options (`node --test --require ...` keeps its runner there). */
  execArgv: string[];
  /** Its arguments after node: the script (a mate-* CLI, a runner's bin) and what it was given. */
  argv: string[];
  settings: GuardSettings;
  explicit: SettingKey[];
  /** Each project's settings, by project name, where a project's own plugin options made them differ from `settings` (Vitest projects). */
  projects?: Record<string, GuardSettings>;
}

/** The variable `mate replay` hands each project's recorded settings over in (JSON: name -> settings); read by the runner's plugin, ranking above the project's own options. */
export const PROJECT_SETTINGS_ENV = 'MATE_GUARD_PROJECT_SETTINGS';

/** Written once by the process that starts a run (GuardedRun.start). */
export function writeRunRecord(dir: string, runner: string, handoff: Pick<Handoff, 'settings' | 'explicit'>): void {
  const record: RunRecord = {
    tool: 'mate-guard',
    version: VERSION,
    runner,
    cwd: process.cwd(),
    execArgv: process.execArgv,
    argv: process.argv.slice(1),
    settings: handoff.settings,
    explicit: handoff.explicit,
  };
  writeNewFile(path.join(dir, RECORD_FILE), JSON.stringify(record, null, 2) + '\n');
}

/**
 * Adds each project's settings to the run's record, once the runner knows
 * its projects (after the record was written: the run starts before the
 * last project is configured). Nothing is added where no project differs.
 */
export function recordProjectSettings(dir: string, projects: Record<string, GuardSettings>): void {
  const file = path.join(dir, RECORD_FILE);
  const record = JSON.parse(fs.readFileSync(file, 'utf8')) as RunRecord;
  const run = record.settings as unknown as Record<string, unknown>;
  const same = (s: GuardSettings) =>
    Object.entries(s).every(([k, v]) => k === 'reportDir' || JSON.stringify(v) === JSON.stringify(run[k]));
  if (Object.values(projects).every(same)) return;
  writeWholeFile(file, JSON.stringify({ ...record, projects }, null, 2) + '\n');
}

/** The settings `mate replay` handed over for `project` (PROJECT_SETTINGS_ENV), each parsed by its row; undefined when none are. */
export function replayedProjectSettings(
  project: string,
  env: NodeJS.ProcessEnv = process.env,
): GuardSettings | undefined {
  const raw = env[PROJECT_SETTINGS_ENV];
  if (!raw) return undefined;
  let all: unknown;
  try {
    all = JSON.parse(raw);
  } catch {
    throw new GuardConfigError(
      `${PROJECT_SETTINGS_ENV} is internal to mate replay and holds ${JSON.stringify(raw)}: not JSON`,
    );
  }
  const given = (all as Record<string, unknown> | null)?.[project];
  if (typeof given !== 'object' || given === null || !Object.hasOwn(all as object, project)) return undefined;
  const out: Record<string, unknown> = {};
  for (const row of SETTINGS as readonly SettingRow[]) {
    const v = (given as Record<string, unknown>)[row.key];
    out[row.key] =
      v === undefined || v === null ? row.default : row.value.parse(v, `${PROJECT_SETTINGS_ENV} ${project} ${row.key}`);
  }
  return out as GuardSettings;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * The record of a run's report directory. `dir` may also be the directory
 * given as --guard-report-dir, holding one run's directory.
 */
export function readRunRecord(dir: string): { dir: string; record: RunRecord } {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new GuardConfigError(
      `${JSON.stringify(dir)} is not a directory: give a run's report directory (the path after "[mate-guard] reports:")`,
    );
  let runDir = dir;
  if (!fs.existsSync(path.join(dir, RECORD_FILE))) {
    const runs = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, RECORD_FILE)));
    if (runs.length > 1)
      throw new GuardConfigError(
        `${JSON.stringify(dir)} holds ${runs.length} runs: give one of them (${runs.map((d) => path.join(dir, d)).join(', ')})`,
      );
    if (runs.length === 0)
      throw new GuardConfigError(
        `${JSON.stringify(dir)} holds no run record (${RECORD_FILE}): give the report directory of a run made by a mate-* CLI, a runner with the mate-guard plugin, or mate guard-run`,
      );
    runDir = path.join(dir, runs[0]);
  }
  const file = path.join(runDir, RECORD_FILE);
  let raw: Partial<RunRecord>;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<RunRecord>;
  } catch (err) {
    // JSON's message quotes the file's text: shown, never obeyed.
    throw new GuardConfigError(`${file} is not a run record: ${visible((err as Error).message)}`);
  }
  if (
    raw.tool !== 'mate-guard' ||
    raw.version !== VERSION ||
    typeof raw.runner !== 'string' ||
    typeof raw.cwd !== 'string' ||
    !isStrings(raw.execArgv) ||
    !isStrings(raw.argv) ||
    typeof raw.settings !== 'object' ||
    raw.settings === null
  ) {
    throw new GuardConfigError(`${file} is not a version ${VERSION} run record (written by a different mate-guard?)`);
  }
  const projects = raw.projects;
  if (
    projects !== undefined &&
    (typeof projects !== 'object' ||
      projects === null ||
      Array.isArray(projects) ||
      Object.values(projects).some((s) => typeof s !== 'object' || s === null))
  ) {
    throw new GuardConfigError(`${file}: projects is not an object of each project's settings`);
  }
  return {
    dir: runDir,
    record: { ...raw, explicit: isStrings(raw.explicit) ? (raw.explicit as SettingKey[]) : [] } as RunRecord,
  };
}
