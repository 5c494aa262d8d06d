// What `mate replay <dir>` runs: the recorded command narrowed to the
// tests its violations name, under the same runner, with the recorded
// settings (mode, alignment and launch blocking as asked). The runner's
// own entry point (a mate-* CLI, the runner with the plugin), as installed
// here, owns the replay's run, as it owned the recorded one: the settings
// reach it as MATE_<RUNNER>_GUARD_* variables (every runner setting, so
// each is explicit: nothing in the config can change it back), its guard
// flags are taken out of the command line, and of the rest only what
// replay-trust.ts trusts is taken.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { isKernelException, type ViolationEvent } from '../report/event';
import { isNotice } from '../report/notices';
import { testPathFile } from '../report/test-path';
import { parseFlags, RUNNER_FLAGS } from '../settings/flags';
import { rowsOn, spell, type GuardSettings, type RunnerName } from '../settings/table';
import { show } from '../settings/values';
import type { RunRecord } from './record';
import { localEntry } from './replay-entry';
import { NODE_ARGS, withoutWatchAndShards } from './runner-args';
import type { RunnerAdapter } from './runner-adapter';
import { NODE_OPTIONS } from './node-options';
import { assemble, judgeArgs, placeOf, shellWord, type Judged, type TrustContext } from './replay-trust';
import type { RunnerOptions } from './runner-options';
import { PROJECT_PREFIX } from '../report/test-path';

/** The tests a run's violations name; `whole` when one names none (the whole command reruns). */
export interface ReplayTarget {
  files: string[];
  /** Test paths: `file > suite > test`. */
  tests: string[];
  whole: boolean;
  /** A device (CUDA) fault or damage: the replay turns launch blocking on. */
  device: boolean;
}

const fileOf = testPathFile;

export function replayTarget(events: readonly ViolationEvent[]): ReplayTarget {
  const target: ReplayTarget = { files: [], tests: [], whole: events.length === 0, device: false };
  for (const e of events) {
    // An out-of-memory is no bug to reproduce.
    if (e.suppressed || isNotice(e)) continue;
    if (isKernelException(e) || e.kind === 'cross-stream-free' || e.allocation?.backend === 'cuda')
      target.device = true;
    const tests = [e.test, e.allocation?.allocTest].filter((t): t is string => !!t);
    if (tests.length === 0) target.whole = true;
    for (const t of tests) {
      if (!target.tests.includes(t)) target.tests.push(t);
      if (!target.files.includes(fileOf(t))) target.files.push(fileOf(t));
    }
  }
  return target;
}

/** A setting as its environment variable spells it (the inverse of the row's parser); undefined: unset. */
function envValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

/** The runner's MATE_<RUNNER>_GUARD_* variables for `settings`, replacing any of the caller's. */
export function settingsEnv(runner: RunnerName, settings: GuardSettings, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...base };
  const prefix = `${spell.envPrefix(runner)}GUARD_`;
  for (const k of Object.keys(env)) if (k.startsWith(prefix)) delete env[k];
  for (const r of rowsOn('runner')) {
    // The replay's run gets a directory of its own.
    if (r.key === 'reportDir') continue;
    const v = envValue((settings as Record<string, unknown>)[r.key]);
    if (v !== undefined) env[spell.env(runner, r)] = v;
  }
  return env;
}

/** Replaces the recorded working directory with the local one in a path (a CI artifact replayed in a checkout). */
export function rebaser(recorded: string, local: string): (arg: string) => string {
  if (recorded === local) return (arg) => arg;
  const prefix = recorded.endsWith(path.sep) ? recorded : recorded + path.sep;
  return (arg) =>
    arg === recorded ? local : arg.startsWith(prefix) ? path.join(local, arg.slice(prefix.length)) : arg;
}

/** The arguments without guard flags, also after a `--` (`vitest run -- --guard-alloc`): the replay's settings come by the environment. */
function withoutGuardFlags(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  if (end < 0) return parseFlags(args, RUNNER_FLAGS).rest;
  const before = parseFlags(args.slice(0, end), RUNNER_FLAGS).rest;
  const after = withoutGuardFlags(args.slice(end + 1));
  return after.length ? [...before, '--', ...after] : before;
}

/** The command that replays a record, built from this checkout, and what of the record it left out or took on trust. */
export interface ReplayCommand {
  /** node's arguments: the local entry point (or node's options for `node --test`) and the runner's. */
  args: string[];
  leftOut: string[];
  trusted: string[];
}

/**
 * The command that replays `record` on `target`: the runner's entry point
 * as installed here (or, for a plain `node --test`, node's options), the
 * recorded Node options and arguments replay trusts (replay-trust.ts)
 * without guard flags or watch mode, narrowed to the target's files (those
 * inside the directory) and tests the way the runner selects them (its
 * package's adapter, run/runner-adapter.ts). `file` names the record in errors.
 */
export function runnerCommand(
  record: RunRecord & { runner: RunnerName },
  selection: RunnerAdapter,
  ctx: TrustContext,
  target: ReplayTarget,
  file: string,
): ReplayCommand {
  const rebase = rebaser(record.cwd, ctx.cwd);
  // Narrowed, a shard would hold other files, or none; a replay never watches.
  const narrow = !target.whole && target.files.length > 0;
  const out: ReplayCommand = { args: [], leftOut: [], trusted: [] };
  const judge = (args: readonly string[], surface: RunnerOptions): Judged => {
    const j = judgeArgs(args, surface, ctx);
    out.leftOut.push(...j.leftOut);
    out.trusted.push(...j.trusted);
    return j;
  };
  const node = judge(withoutWatchAndShards(NODE_ARGS, record.execArgv.map(rebase), !narrow), NODE_OPTIONS);
  // A run node itself started (`node --test --require @mate-guard/node-test files...`, the adapter's nodeEntry): its arguments are node's.
  const nodeEntry = selection.nodeEntry;
  const startedByNode = nodeEntry !== undefined && record.execArgv.includes(nodeEntry.flag);
  const head = assemble(node, NODE_OPTIONS);
  if (!startedByNode) {
    const script = record.argv[0];
    if (script === undefined) throw new GuardConfigError(`replay: ${file} names no script that started the run`);
    const entry = localEntry(selection, script, ctx.cwd, ctx.root);
    if ('script' in entry) head.push(entry.script);
    else if ('unknown' in entry && ctx.trust && placeOf(rebase(script), ctx) === undefined) {
      // Trusted, a script of the checkout's own runs as recorded; one from elsewhere never does.
      head.push(rebase(script));
      out.trusted.push(shellWord(script));
    } else if ('unknown' in entry && ctx.trust) {
      throw new GuardConfigError(
        `replay: ${file} says the run started ${show(script)}, which is not a file of this checkout (${placeOf(rebase(script), ctx)}): replay does not run it, even with --trust-record`,
      );
    } else if ('unknown' in entry) {
      throw new GuardConfigError(
        `replay: ${file} says the run started ${show(script)}, which replay does not run from a record (${entry.unknown}); read it, then give --trust-record to run it as recorded`,
      );
    } else throw new GuardConfigError(`replay: ${file} is a ${record.runner} run, and ${entry.missing}`);
  }
  // The runner's own description of its options (its package's runner/options), or node's for a plain node --test.
  const surface: RunnerOptions = startedByNode ? nodeEntry.options : selection.options;
  const given = withoutWatchAndShards(
    selection.args,
    withoutGuardFlags((startedByNode ? record.argv : record.argv.slice(1)).map(rebase)),
    !narrow,
  );
  const end = given.indexOf('--');
  const args = judge(end < 0 ? given : given.slice(0, end), surface);
  const after = end < 0 ? undefined : judge(given.slice(end + 1), surface);
  const tail = after && (after.positionals.length || after.options.length) ? ['--', ...assemble(after, surface)] : [];

  // The failing tests' files: files here, inside the directory, out of the report directory and node_modules.
  const files: string[] = [];
  for (const f of target.files) {
    const local = rebase(f);
    const reason =
      placeOf(local, ctx) ??
      (fs.statSync(path.resolve(ctx.cwd, local), { throwIfNoEntry: false })?.isFile() ? undefined : 'not a file here');
    if (reason) out.leftOut.push(`${shellWord(f)} (a failing test's file, ${reason})`);
    else files.push(local);
  }
  if (narrow && files.length === 0) {
    throw new GuardConfigError(
      `replay: ${file} names no failing test's file that replay runs here: ${out.leftOut.join(', ')}`,
    );
  }
  // A test or project name reaches the runner only as an option's value; one that reads as an option is not taken.
  const tests = target.tests.filter((t) => {
    const project = PROJECT_PREFIX.exec(t)?.[1];
    if (project === undefined || !/^-|[\x00-\x1f\x7f]/.test(project)) return true;
    out.leftOut.push(`${shellWord(t)} (a test whose project name reads as an option)`);
    return false;
  });
  if (narrow && tests.length === 0 && target.tests.length > 0) {
    throw new GuardConfigError(
      `replay: ${file} names no failing test that replay runs here: ${out.leftOut.join(', ')}`,
    );
  }
  const judged = { positionals: args.positionals, options: args.options, tail, cwd: ctx.cwd };
  out.args = [...head, ...(narrow ? selection.select({ ...judged, files, tests }) : selection.whole(judged))];
  return out;
}
