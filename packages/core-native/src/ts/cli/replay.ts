// `mate replay <report-dir>`: reruns what a recorded run ran (the tests
// its violations name, under their runner, or the guard-run command) with
// the recorded settings, in the mode and alignment asked for, so a CI
// artifact becomes a local repro in one command.
import * as fs from 'node:fs';

import { GuardConfigError } from '../errors';
import { runChild } from '../run/child';
import { readRunRecord, type RunRecord } from '../run/record';
import { isRunner, REPLAY_RUNNERS, rebaser, replayTarget, runnerCommand, settingsEnv, type ReplayTarget } from '../run/replay-plan';
import { readReportDir } from '../run/report-dir';
import { SETTINGS, type GuardSettings, type SettingRow } from '../settings/table';
import { show } from '../settings/values';
import { guardRun } from './guard-run';

export const REPLAY_USAGE = `Usage: mate replay <report-dir> [--guard-mode tail|head] [--alignment <n>] [--[no-]launch-blocking] [--dump-inputs <kernel-glob>]

Reruns what the run that wrote <report-dir> ran (its replay.json): the
tests its violations name, under the same runner and entry point (a mate-*
CLI, the runner with the plugin), or the whole mate guard-run command,
with the recorded settings, in the recorded working directory (or here,
where it does not exist). A run's directory is printed as
"[mate-guard] reports: <dir>"; a --guard-report-dir holding one run will do.

Options:
  --guard-mode <tail|head>   guard side for the replay (default: as recorded; head makes underruns fault)
  --alignment <n>            pointer alignment, a power of two 1..4096 (default: as recorded; 1 makes any overrun fault)
  --launch-blocking, --no-launch-blocking
                             CUDA: synchronize after every launch (default: on when the run had a device
                             fault or device damage, so the report names the kernel; else as recorded)
  --dump-inputs <kernel-glob>
                             CUDA: save the inputs of the matching kernel's launches (default: as recorded)
  -h, --help                 show this help

Exits with the replayed command's status (2 for a bad argument or record).
`;

interface ReplayArgs {
  dir: string;
  mode?: GuardSettings['mode'];
  alignment?: number;
  launchBlocking?: boolean;
  dumpInputs?: string;
}

const row = (key: string) => (SETTINGS as readonly SettingRow[]).find((r) => r.key === key)!;

export function parseReplayArgs(argv: readonly string[]): ReplayArgs {
  const out: Partial<ReplayArgs> = {};
  const dirs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^(--[a-z-]+)(?:=(.*))?$/s.exec(argv[i]);
    if (!m) {
      if (argv[i].startsWith('-')) throw new GuardConfigError(`replay: unknown option ${show(argv[i])}; known: --guard-mode, --alignment, --launch-blocking, --no-launch-blocking, --dump-inputs, --help`);
      dirs.push(argv[i]);
      continue;
    }
    const [, flag, inline] = m;
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined || next.startsWith('-')) throw new GuardConfigError(`replay: ${flag} needs a value`);
      return next;
    };
    if (flag === '--guard-mode' || flag === '--mode') out.mode = row('mode').value.parse(value(), flag) as GuardSettings['mode'];
    else if (flag === '--alignment' || flag === '--guard-alignment') out.alignment = row('alignment').value.parse(value(), flag) as number;
    else if (flag === '--launch-blocking' || flag === '--guard-launch-blocking') out.launchBlocking = inline === undefined ? true : row('launchBlocking').value.parse(inline, flag) as boolean;
    else if (flag === '--no-launch-blocking' || flag === '--no-guard-launch-blocking') out.launchBlocking = false;
    else if (flag === '--dump-inputs' || flag === '--guard-dump-inputs') out.dumpInputs = row('dumpInputs').value.parse(value(), flag) as string;
    else throw new GuardConfigError(`replay: unknown option ${show(flag)}; known: --guard-mode, --alignment, --launch-blocking, --no-launch-blocking, --dump-inputs, --help`);
  }
  if (dirs.length !== 1) throw new GuardConfigError(`replay: ${dirs.length ? `one report directory, got ${dirs.length}` : 'no report directory given'}: mate replay <report-dir>`);
  return { ...out, dir: dirs[0] };
}

/** The replay's settings: recorded, with the mode and alignment asked for, launch blocking for device faults. */
function replaySettings(record: RunRecord, args: ReplayArgs, target: ReplayTarget): GuardSettings {
  const s = record.settings;
  return {
    ...s,
    enabled: true,
    reportDir: undefined,
    mode: args.mode ?? s.mode,
    alignment: args.alignment ?? s.alignment,
    launchBlocking: args.launchBlocking ?? (target.device || s.launchBlocking),
    dumpInputs: args.dumpInputs ?? s.dumpInputs,
  };
}

function describe(target: ReplayTarget): string {
  if (target.whole) return 'the whole recorded command';
  return `${target.tests.length === 1 ? 'test' : 'tests'} ${target.tests.join(', ')}`;
}

export async function mateReplay(argv: readonly string[]): Promise<number> {
  const args = parseReplayArgs(argv);
  const { dir, record } = readRunRecord(args.dir);
  if (record.runner !== 'run' && !isRunner(record.runner)) {
    throw new GuardConfigError(`replay: ${dir}/replay.json names an unknown runner ${show(record.runner)}; known: ${[...REPLAY_RUNNERS, 'run'].join(', ')}`);
  }
  const target = replayTarget(readReportDir(dir).violations);
  const settings = replaySettings(record, args, target);
  const cwd = fs.existsSync(record.cwd) ? record.cwd : process.cwd();
  const how = `${settings.mode} mode, alignment ${settings.alignment}${settings.launchBlocking ? ', launch blocking' : ''}${settings.dumpInputs ? `, saving the inputs of ${show(settings.dumpInputs)}` : ''}`;
  const where = cwd === record.cwd ? '' : ` (recorded in ${record.cwd}, which is not here: replaying in ${cwd})`;
  process.stderr.write(`[mate-guard] replaying ${describe(target)} (${record.runner === 'run' ? 'mate guard-run' : record.runner}) in ${how}${where}\n`);
  if (record.runner === 'run') {
    // The command after guard-run's `--`, run as guard-run runs it (this process owns the replay's run).
    const dashDash = record.argv.indexOf('--');
    const command = dashDash < 0 ? [] : record.argv.slice(dashDash + 1).map(rebaser(record.cwd, cwd));
    if (command.length === 0) throw new GuardConfigError(`replay: ${dir}/replay.json has no guard-run command`);
    process.chdir(cwd);
    return guardRun({ settings, command });
  }
  const runner = record.runner;
  const command = await runnerCommand({ ...record, runner }, cwd, target);
  const env = settingsEnv(runner, settings, process.env);
  try {
    return (await runChild(process.execPath, command, env, cwd)).status;
  } catch (err) {
    process.stderr.write(`mate replay: could not start ${show(command[0])}: ${(err as Error).message}\n`);
    return 127;
  }
}
