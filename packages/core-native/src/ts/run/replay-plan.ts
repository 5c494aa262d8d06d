// What `mate replay <dir>` runs: the recorded command narrowed to the
// tests its violations name, under the same runner, with the recorded
// settings (mode, alignment and launch blocking as asked). The runner's
// own entry point (a mate-* CLI, the runner with the plugin) owns the
// replay's run, as it owned the recorded one: the settings reach it as
// MATE_<RUNNER>_GUARD_* variables (every runner setting, so each is
// explicit: nothing in the config can change it back), its guard flags
// are taken out of the command line.
import * as path from 'node:path';

import type { ViolationEvent } from '../report/event';
import { parseFlags, RUNNER_FLAGS } from '../settings/flags';
import { rowsOn, spell, type GuardSettings, type RunnerName } from '../settings/table';
import type { RunRecord } from './record';
import { withoutWatchAndShards } from './runner-args';

/** The tests a run's violations name; `whole` when one names none (the whole command reruns). */
export interface ReplayTarget {
  files: string[];
  /** Test paths: `file > suite > test`. */
  tests: string[];
  whole: boolean;
  /** A device (CUDA) fault or damage: the replay turns launch blocking on. */
  device: boolean;
}

const fileOf = (test: string): string => test.split(' > ')[0];

export function replayTarget(events: readonly ViolationEvent[]): ReplayTarget {
  const target: ReplayTarget = { files: [], tests: [], whole: events.length === 0, device: false };
  for (const e of events) {
    if (e.suppressed) continue;
    if (e.kind === 'illegal-address' || e.kind === 'cross-stream-free' || e.allocation?.backend === 'cuda') target.device = true;
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

/**
 * The runners whose test selection replay knows (how to rerun only the
 * failing files and tests): a runner is added here, with its case in
 * runnerCommand, when it should be replayable.
 */
export const REPLAY_RUNNERS = ['vitest', 'jest', 'mocha', 'node-test'] as const;
export const isRunner = (runner: string): runner is RunnerName => (REPLAY_RUNNERS as readonly string[]).includes(runner);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `^(?:a|b)$` over the tests' names as `name` spells them, or undefined when none has one. */
function namePattern(tests: readonly string[], name: (segments: string[]) => string): string | undefined {
  const names = [...new Set(tests.map((t) => name(t.split(' > ').slice(1))))].filter((n) => n.length > 0);
  return names.length ? `^(?:${names.map(escapeRegExp).join('|')})$` : undefined;
}

/** Replaces the recorded working directory with the local one in a path (a CI artifact replayed in a checkout). */
export function rebaser(recorded: string, local: string): (arg: string) => string {
  if (recorded === local) return (arg) => arg;
  const prefix = recorded.endsWith(path.sep) ? recorded : recorded + path.sep;
  return (arg) => (arg === recorded ? local : arg.startsWith(prefix) ? path.join(local, arg.slice(prefix.length)) : arg);
}

/** Vitest's file filters among its arguments (its own parser, from the project), or none when it can't be loaded. */
async function vitestFilters(args: readonly string[], cwd: string): Promise<string[]> {
  try {
    const { createRequire } = await import('node:module');
    const entry = createRequire(path.join(cwd, 'noop.js')).resolve('vitest/node');
    const vitest = (await import(entry)) as { parseCLI?: (argv: string[], opts?: object) => { filter?: string[] } };
    return vitest.parseCLI?.(['vitest', ...args], { allowUnknownOptions: true }).filter ?? [];
  } catch {
    return [];
  }
}

/** The arguments without guard flags, also after a `--` (`vitest run -- --guard-alloc`): the replay's settings come by the environment. */
function withoutGuardFlags(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  if (end < 0) return parseFlags(args, RUNNER_FLAGS).rest;
  const before = parseFlags(args.slice(0, end), RUNNER_FLAGS).rest;
  const after = withoutGuardFlags(args.slice(end + 1));
  return after.length ? [...before, '--', ...after] : before;
}

function without(args: readonly string[], drop: readonly string[]): string[] {
  const left = [...drop];
  return args.filter((a) => {
    const i = left.indexOf(a);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/**
 * The command that replays `record` on `target`: the recorded script (or,
 * for a plain `node --test`, node's options) and its arguments without
 * guard flags or watch mode, narrowed to the target's files and tests the
 * way the runner selects them (without a shard, then).
 */
export async function runnerCommand(record: RunRecord & { runner: RunnerName }, cwd: string, target: ReplayTarget): Promise<string[]> {
  const rebase = rebaser(record.cwd, cwd);
  const narrow = !target.whole && target.files.length > 0;
  const execArgv = withoutWatchAndShards('node', record.execArgv.map(rebase), !narrow);
  // `node --test --require @mate-guard/node-test files...`: the arguments are all test files.
  const plainNodeTest = record.execArgv.includes('--test');
  const script = plainNodeTest ? undefined : record.argv[0];
  const given = plainNodeTest ? record.argv : record.argv.slice(1);
  const head = [...execArgv, ...(script ? [rebase(script)] : [])];
  // Narrowed, a shard would hold other files, or none.
  let args = withoutWatchAndShards(record.runner, withoutGuardFlags(given.map(rebase)), !narrow);
  switch (record.runner) {
    case 'vitest': {
      // One run, never watch mode: the `run` command, without the recorded file filters when narrowing.
      const filters = narrow ? await vitestFilters(args, cwd) : [];
      args = without(args, filters).filter((a) => !['run', 'watch', 'dev'].includes(a));
      if (!narrow) return [...head, 'run', ...args];
      const pattern = namePattern(target.tests, (s) => s.join(' '));
      return [...head, 'run', ...args, ...target.files, ...(pattern ? ['-t', pattern] : [])];
    }
    case 'jest': {
      if (!narrow) return [...head, ...args];
      const pattern = namePattern(target.tests, (s) => s.join(' '));
      return [...head, ...args, '--runTestsByPath', ...target.files.map((f) => path.resolve(cwd, f)), ...(pattern ? ['-t', pattern] : [])];
    }
    case 'mocha': {
      if (!narrow) return [...head, ...args];
      // Spec files from the rc file add to positional ones: the titles narrow the run.
      const pattern = namePattern(target.tests, (s) => s.join(' '));
      const kept: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (['-g', '--grep', '-f', '--fgrep'].includes(args[i])) i++;
        else if (!/^--(grep|fgrep|invert)(=|$)/.test(args[i]) && args[i] !== '-i') kept.push(args[i]);
      }
      return [...head, ...kept, ...(pattern ? ['--grep', pattern] : [])];
    }
    case 'node-test': {
      if (!narrow) return [...head, ...args];
      const options = args.filter((a) => a.startsWith('-') && !/^--test-name-pattern(=|$)/.test(a));
      const pattern = namePattern(target.tests, (s) => s[s.length - 1] ?? '');
      return [...head, ...options, ...(pattern ? [`--test-name-pattern=${pattern}`] : []), ...target.files];
    }
    default:
      return [...head, ...args];
  }
}
