// Runner arguments that say how a run runs, not which tests run: watch mode
// and shards. A narrowed run (a canary rerun, `mate replay`) never watches
// and never shards: the shard of the narrowed run holds other files, or
// none. Worker counts stay, with their values: Jest's `-w 2` is not watch
// mode, and its `2` is not a test path. Which words those are, each runner
// package says (its selection's `args`); node's own options are core's.
import type { RunnerArgs } from './selection';

/** node's own options, for node --test and for any runner's node flags. */
export const NODE_ARGS: RunnerArgs = { watch: ['--watch'], watchWithValue: ['--watch-path'], shard: ['--test-shard'] };

const FALSE = /^(false|0|no|off)$/i;
const BOOLEAN_WORD = /^(true|false)$/;

type Hit = { kind: 'watch'; on: boolean; words: number } | { kind: 'shard'; words: number };

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
  if (eq < 0 && arg.startsWith('--no-') && spec.watch.includes(`--${arg.slice(5)}`))
    return { kind: 'watch', on: false, words: 1 };
  if (spec.watchWithValue.includes(name))
    return { kind: 'watch', on: true, words: inline === undefined && next !== undefined ? 2 : 1 };
  if (spec.shard.includes(name)) return { kind: 'shard', words: inline === undefined && next !== undefined ? 2 : 1 };
  return undefined;
}

/** Whether these arguments (up to a `--`) ask the runner for watch mode: the last word on it wins. */
export function watchRequested(spec: RunnerArgs, args: readonly string[]): boolean {
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
 * to a `--`; after it nothing is the runner's. NODE_ARGS reads them as
 * node's own options (a runner's execArgv). `keepShards`: a run of the
 * whole command keeps its shard.
 */
export function withoutWatchAndShards(spec: RunnerArgs, args: readonly string[], keepShards = false): string[] {
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
