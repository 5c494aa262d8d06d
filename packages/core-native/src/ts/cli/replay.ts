// `mate replay <report-dir>`: reruns what a recorded run ran (the tests
// its violations name, under their runner, or the guard-run command) with
// the recorded settings, in the mode and alignment asked for, so a CI
// artifact becomes a local repro in one command. The record is data from
// wherever the run happened: the command is built from this checkout
// (run/replay-plan.ts, run/replay-trust.ts) and printed before it runs.
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { runChild } from '../run/child';
import { PROJECT_SETTINGS_ENV, readRunRecord, RECORD_FILE, type RunRecord } from '../run/record';
import { rebaser, replayTarget, runnerCommand, settingsEnv, type ReplayTarget } from '../run/replay-plan';
import { findAdapter, installedRunners, loadAdapter } from '../run/runner-adapter';
import { inside, placeOf, realOf, shellLine, shellWord, trustContext, type TrustContext } from '../run/replay-trust';
import { readReportDir } from '../run/report-dir';
import { refuseWithoutDevice, type SpelledLayer } from '../settings/device-only';
import { parseFlags, type FlagSyntax } from '../settings/flags';
import { rowsOn, SETTINGS, spell, type GuardSettings, type SettingRow } from '../settings/table';
import { show } from '../settings/values';
import { visible } from '../text/escape';
import { guardRun } from './guard-run';

export const REPLAY_USAGE = `Usage: mate replay <report-dir> [--guard-mode tail|head] [--alignment <n>] [--[no-]launch-blocking] [--dump-inputs <kernel-glob>] [--trust-record] [--dry-run]

Reruns what the run that wrote <report-dir> ran (its replay.json): the
tests its violations name, under the same runner and entry point (a mate-*
CLI, the runner with the plugin) as installed here, with the recorded
settings, in the recorded working directory where that is in this
checkout (the git work tree holding this directory, which may be any
folder of it; without git, this directory), else at the checkout's top.
A run's directory is printed as
"[mate-guard] reports: <dir>"; a --guard-report-dir holding one run will do.

A report directory is data from wherever the run happened: of its
command line, replay takes only the Node options and runner arguments it
knows to load nothing from elsewhere, with paths inside the working
directory and out of <report-dir>. It prints the command and directory
before running, and names what it left out (-e/--eval/-p, a --require,
--import or loader from elsewhere, --inspect, options it does not know).
It does not run a guard-run command, or a script that is not the runner's
entry point, from a record unless told to.

Options:
  --guard-mode <tail|head>   guard side for the replay (default: as recorded; head makes underruns fault)
  --alignment <n>            pointer alignment, a power of two 1..4096 (default: as recorded; 1 makes any overrun fault)
  --launch-blocking, --no-launch-blocking
                             CUDA: synchronize after every launch (default: on when the run had a device
                             fault or device damage, so the report names the kernel; else as recorded)
  --dump-inputs <kernel-glob>
                             CUDA: save the inputs of the matching kernel's launches (default: as recorded)
  --trust-record             run what the record says though replay does not vouch for it: a guard-run
                             command, a script other than the runner's, options replay does not know,
                             packages it cannot vouch for (printed first; code, debuggers and paths
                             from elsewhere stay out)
  --dry-run                  print what would run (and what is left out), run nothing; exit 0
  -h, --help                 show this help

Exits with the replayed command's status (2 for a bad argument, or a record it does not replay).
`;

interface ReplayArgs {
  dir: string;
  mode?: GuardSettings['mode'];
  alignment?: number;
  launchBlocking?: boolean;
  dumpInputs?: string;
  trustRecord: boolean;
  dryRun: boolean;
  /** The settings flags as each spelling gave them, highest rank first: for refuseWithoutDevice. */
  spelled: SpelledLayer[];
}

// Its settings flags are the settings table's rows on the replay surface, spelled as guard-run spells
// them (`--mode`) or as the runners do (`--guard-mode`); the rest are replay's own.
const ROWS = rowsOn('replay');
const OWN = ['--trust-record', '--dry-run', '--help'];
const SPELLINGS: FlagSyntax[] = [
  { rows: ROWS, flagOf: spell.runnerFlag, spaceValues: true, ours: /^$/ },
  { rows: ROWS, flagOf: spell.guardRunFlag, spaceValues: true, ours: /^$/ },
];
const known = (): string => {
  const flags = ROWS.flatMap((r) => [
    spell.guardRunFlag(r),
    ...(r.value.placeholder === undefined ? [`--no-${r.name}`] : []),
  ]);
  return `${flags.join(', ')} (each also as --guard-<name>), ${OWN.join(', ')}`;
};

export function parseReplayArgs(argv: readonly string[]): ReplayArgs {
  let values: Partial<GuardSettings> = {};
  let rest = [...argv];
  const spelled: SpelledLayer[] = [];
  for (const syntax of SPELLINGS) {
    const parsed = parseFlags(rest, syntax);
    values = { ...values, ...parsed.values };
    rest = parsed.rest;
    // A replay turns no device guard on: it has one when the recorded run had.
    spelled.unshift({ values: parsed.values, where: syntax.flagOf, device: 'the recorded run had it off' });
  }
  const out: Pick<ReplayArgs, 'trustRecord' | 'dryRun' | 'spelled'> = { trustRecord: false, dryRun: false, spelled };
  const dirs: string[] = [];
  for (const arg of rest) {
    if (arg === '--trust-record') out.trustRecord = true;
    else if (arg === '--dry-run') out.dryRun = true;
    else if (arg.startsWith('-'))
      throw new GuardConfigError(`replay: unknown option ${show(arg.replace(/=.*$/s, ''))}; known: ${known()}`);
    else dirs.push(arg);
  }
  if (dirs.length !== 1)
    throw new GuardConfigError(
      `replay: ${dirs.length ? `one report directory, got ${dirs.length}` : 'no report directory given'}: mate replay <report-dir>`,
    );
  const { mode, alignment, launchBlocking, dumpInputs } = values;
  return {
    ...out,
    dir: dirs[0],
    ...(mode !== undefined ? { mode } : {}),
    ...(alignment !== undefined ? { alignment } : {}),
    ...(launchBlocking !== undefined ? { launchBlocking } : {}),
    ...(dumpInputs !== undefined ? { dumpInputs } : {}),
  };
}

/**
 * The recorded settings, each parsed by its row as any other input (a
 * value the table refuses stops the replay, naming it), with the mode and
 * alignment asked for and launch blocking for device faults. The report
 * directory is the replay's own; a suppressions file recorded under the
 * run's directory is looked for under this one, and read only from inside
 * it (else left out, named in `leftOut`).
 */
function replaySettings(
  record: RunRecord,
  own: GuardSettings,
  args: ReplayArgs,
  target: ReplayTarget,
  file: string,
  ctx: TrustContext,
  leftOut: string[],
): GuardSettings {
  const rebase = rebaser(record.cwd, ctx.cwd);
  const recorded = own as unknown as Record<string, unknown>;
  const s: Record<string, unknown> = {};
  for (const r of SETTINGS as readonly SettingRow[]) {
    let v = recorded[r.key];
    if (r.key === 'suppressions' && typeof v === 'string') {
      v = rebase(v);
      const reason = placeOf(v as string, ctx);
      if (reason) {
        const line = `the suppressions file ${shellWord(v as string)} (${reason})`;
        // Once, however many projects recorded it.
        if (!leftOut.includes(line)) leftOut.push(line);
        v = undefined;
      }
    }
    s[r.key] =
      v === undefined || v === null || r.key === 'reportDir'
        ? r.default
        : r.value.parse(v, `${file}: settings.${r.key}`);
  }
  const settings = s as GuardSettings;
  return {
    ...settings,
    enabled: true,
    reportDir: undefined,
    mode: args.mode ?? settings.mode,
    alignment: args.alignment ?? settings.alignment,
    launchBlocking: args.launchBlocking ?? (target.device || settings.launchBlocking),
    dumpInputs: args.dumpInputs ?? settings.dumpInputs,
  };
}

function describe(target: ReplayTarget): string {
  if (target.whole) return 'the whole recorded command';
  return `${target.tests.length === 1 ? 'test' : 'tests'} ${target.tests.join(', ')}`;
}

// What a record says is shown, never obeyed by the terminal: control characters (escape sequences that could hide part of a line) are spelled out.
const say = (line: string) => process.stderr.write(`[mate-guard] ${visible(line)}\n`);

export async function mateReplay(argv: readonly string[]): Promise<number> {
  const args = parseReplayArgs(argv);
  const { dir, record } = readRunRecord(args.dir);
  const file = path.join(dir, RECORD_FILE);
  const target = replayTarget(readReportDir(dir).violations);
  // Nothing in what the user named (a run's directory, or the one holding it) runs.
  const { note, ...ctx } = trustContext(
    record.cwd,
    process.cwd(),
    path.resolve(args.dir),
    args.trustRecord,
  ) as TrustContext & { note?: string };
  const cwd = ctx.cwd;
  const rebase = rebaser(record.cwd, cwd);
  const settingsLeftOut: string[] = [];
  const settings = replaySettings(record, record.settings, args, target, file, ctx, settingsLeftOut);
  // Each project's own recorded settings (Vitest projects with plugin options of their own), replayed as the run's are.
  const projects = Object.entries(record.projects ?? {}).map(
    ([name, own]) => [name, replaySettings(record, own, args, target, file, ctx, settingsLeftOut)] as const,
  );
  // --launch-blocking and --dump-inputs act only where the recorded run (or one of its projects) had the device guard.
  const device = [settings, ...projects.map(([, s]) => s)].find((s) => s.device !== undefined)?.device;
  refuseWithoutDevice({ device, launchBlocking: args.launchBlocking, dumpInputs: args.dumpInputs }, args.spelled);
  const modes = projects.some(([, s]) => s.mode !== settings.mode)
    ? `mode ${projects.map(([name, s]) => `${s.mode} (project ${name})`).join(', ')}`
    : `${settings.mode} mode`;
  const how = `${modes}, alignment ${settings.alignment}${settings.launchBlocking ? ', launch blocking' : ''}${settings.dumpInputs ? `, saving the inputs of ${show(settings.dumpInputs)}` : ''}`;
  const where = note ? ` (${note})` : '';
  const replaying = `replaying ${describe(target)} (${record.runner === 'run' ? 'mate guard-run' : record.runner}) in ${how}${where}`;

  if (record.runner === 'run') {
    // The command after guard-run's `--`, run as guard-run runs it (this process owns the replay's run).
    const dashDash = record.argv.indexOf('--');
    const command = dashDash < 0 ? [] : record.argv.slice(dashDash + 1).map(rebase);
    if (command.length === 0) throw new GuardConfigError(`replay: ${file} has no guard-run command`);
    // Any command at all: replay builds none from a record, it runs this one only when told to.
    if (!args.trustRecord) {
      throw new GuardConfigError(
        `replay: ${file} records a mate guard-run command (${shellLine(command)}), which replay does not run from a record; read it, then give --trust-record to run it as recorded`,
      );
    }
    say(replaying);
    if (settingsLeftOut.length) say(`left out of the replay: ${settingsLeftOut.join(', ')}`);
    say(`taken as recorded (--trust-record): the guard-run command`);
    say(`replay runs in ${cwd}: mate guard-run -- ${shellLine(command)}`);
    if (args.dryRun) return 0;
    process.chdir(cwd);
    return guardRun({ settings, command });
  }
  const runner = record.runner;
  // The runner's adapter: its package's, as installed in the checkout (else next to this mate); core knows no runner by name.
  const adapterFile = findAdapter(runner, cwd, ctx.root);
  if (!adapterFile) {
    throw new GuardConfigError(
      `replay: ${file} names the runner ${show(runner)}, which no installed @mate-guard package adapts; known here: ${[...installedRunners(cwd, ctx.root), 'run'].join(', ')}`,
    );
  }
  say(replaying);
  // How the runner reads its options and selects tests: its package's word, as installed in the checkout (named before it loads).
  if (!inside(ctx.root, realOf(adapterFile)))
    say(`${runner}'s options and test selection from ${adapterFile} (outside the checkout)`);
  const selection = await loadAdapter(runner, adapterFile);
  const plan = runnerCommand({ ...record, runner }, selection, ctx, target, file);
  const { args: command, trusted } = plan;
  const leftOut = [...settingsLeftOut, ...plan.leftOut];
  const env = settingsEnv(runner, settings, process.env);
  delete env[PROJECT_SETTINGS_ENV];
  if (projects.length) env[PROJECT_SETTINGS_ENV] = JSON.stringify(Object.fromEntries(projects));
  if (leftOut.length) say(`left out of the replay: ${leftOut.join(', ')}`);
  if (trusted.length) say(`taken as recorded (--trust-record): ${trusted.join(', ')}`);
  say(`replay runs in ${cwd}: ${shellLine([process.execPath, ...command])}`);
  if (args.dryRun) return 0;
  try {
    return (await runChild(process.execPath, command, env, cwd)).status;
  } catch (err) {
    process.stderr.write(`mate replay: could not start ${show(command[0])}: ${(err as Error).message}\n`);
    return 127;
  }
}
