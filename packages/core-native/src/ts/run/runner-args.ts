// Runner arguments that say how a run runs, not which tests run: watch mode
// and shards. A narrowed run (a canary rerun, `mate replay`) never watches
// and never shards: the shard of the narrowed run holds other files, or
// none. Worker counts stay, with their values: Jest's `-w 2` is not watch
// mode, and its `2` is not a test path.
import type { RunnerName } from '../settings/table';

interface RunnerArgs {
  /** Boolean flags that turn watch mode on: `--watch`, `--watch=false`, `--no-watch`, `--watch false`. */
  watch: readonly string[];
  /** Flags with a value that turn watch mode on (node's `--watch-path <dir>`). */
  watchWithValue: readonly string[];
  /** Flags with a value that pick a shard: `--shard=2/3`, `--shard 2/3`. */
  shard: readonly string[];
}

// node's own options, for node --test and for any runner's node flags.
const NODE: RunnerArgs = { watch: ['--watch'], watchWithValue: ['--watch-path'], shard: ['--test-shard'] };

// A runner not listed here: no word of its is read as watch or shard.
const UNKNOWN: RunnerArgs = { watch: [], watchWithValue: [], shard: [] };

const RUNNERS: Partial<Record<RunnerName, RunnerArgs>> = {
  // -w is --maxWorkers in Jest.
  jest: { watch: ['--watch', '--watchAll', '--watch-all'], watchWithValue: [], shard: ['--shard'] },
  vitest: { watch: ['-w', '--watch'], watchWithValue: [], shard: ['--shard'] },
  // --watch-files/--watch-ignore only configure watch mode.
  mocha: { watch: ['-w', '--watch'], watchWithValue: [], shard: [] },
  'node-test': NODE,
};

const FALSE = /^(false|0|no|off)$/i;
const BOOLEAN_WORD = /^(true|false)$/;

type Hit =
  | { kind: 'watch'; on: boolean; words: number }
  | { kind: 'shard'; words: number };

/** What `args[i]` is for `spec`, and how many words it takes (its value included). */
function classify(spec: RunnerArgs, args: readonly string[], i: number): Hit | undefined {
  const arg = args[i];
  const eq = arg.indexOf('=');
  const name = eq < 0 ? arg : arg.slice(0, eq);
  const inline = eq < 0 ? undefined : arg.slice(eq + 1);
  const next = args[i + 1];
  if (spec.watch.includes(name)) {
    if (inline !== undefined) return { kind: 'watch', on: !FALSE.test(inline), words: 1 };
    // yargs (Jest, Mocha) reads `--watch false` as a value.
    if (next !== undefined && BOOLEAN_WORD.test(next)) return { kind: 'watch', on: next === 'true', words: 2 };
    return { kind: 'watch', on: true, words: 1 };
  }
  if (eq < 0 && arg.startsWith('--no-') && spec.watch.includes(`--${arg.slice(5)}`)) return { kind: 'watch', on: false, words: 1 };
  if (spec.watchWithValue.includes(name)) return { kind: 'watch', on: true, words: inline === undefined && next !== undefined ? 2 : 1 };
  if (spec.shard.includes(name)) return { kind: 'shard', words: inline === undefined && next !== undefined ? 2 : 1 };
  return undefined;
}

/** Whether these arguments (up to a `--`) ask the runner for watch mode: the last word on it wins. */
export function watchRequested(runner: RunnerName, args: readonly string[]): boolean {
  const spec = RUNNERS[runner] ?? UNKNOWN;
  let on = false;
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    const hit = classify(spec, args, i);
    if (!hit) continue;
    if (hit.kind === 'watch') on = hit.on;
    i += hit.words - 1;
  }
  return on;
}

/**
 * The arguments without watch and shard flags (their values with them), up
 * to a `--`; after it nothing is the runner's. `'node'` reads them as
 * node's own options (a runner's execArgv). `keepShards`: a run of the
 * whole command keeps its shard.
 */
export function withoutWatchAndShards(runner: RunnerName | 'node', args: readonly string[], keepShards = false): string[] {
  const spec = runner === 'node' ? NODE : RUNNERS[runner] ?? UNKNOWN;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      out.push(...args.slice(i));
      break;
    }
    const hit = classify(spec, args, i);
    if (!hit || (hit.kind === 'shard' && keepShards)) {
      out.push(...args.slice(i, i + (hit?.words ?? 1)));
    }
    i += (hit?.words ?? 1) - 1;
  }
  return out;
}
