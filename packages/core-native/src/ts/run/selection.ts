// How a runner selects tests: each runner package says it (its adapter,
// run/runner-adapter.ts), for its own canary reruns and for `mate replay`,
// which finds it by the record's runner; core keeps no list of runners'
// arguments. Core holds what is shared: the interface,
// the name pattern, and node's own options.
import { PROJECT_PREFIX } from '../report/test-path';
import type { RunnerName } from '../settings/table';
import { splitArgs } from './replay-trust';
import type { RunnerOptions } from './runner-options';
import { withoutWatchAndShards } from './runner-args';

/** The runner's words that say how a run runs, not which tests run: a narrowed run drops them. */
export interface RunnerArgs {
  /** Boolean flags that turn watch mode on: `--watch`, `--watch=false`, `--no-watch`, `--watch false`. */
  watch: readonly string[];
  /** Flags with a value that turn watch mode on (node's `--watch-path <dir>`). */
  watchWithValue: readonly string[];
  /** Flags with a value that pick a shard: `--shard=2/3`, `--shard 2/3`. */
  shard: readonly string[];
}

/** A command line narrowed to some tests: what the runner was given, and what to run of it. */
export interface SelectionInput {
  /** The runner's positional arguments (files, globs, filters), without watch and shard flags. */
  positionals: readonly string[];
  /** Its options, each with its value (one or two words). */
  options: readonly (readonly string[])[];
  /** What came after `--` (kept after the selection, `--` included), or nothing. */
  tail: readonly string[];
  /** The test files to run, relative to `cwd` (as the reports name them). */
  files: readonly string[];
  /** Test paths (`[project] file > suite > test`) of the tests to run; none: every test of the files. */
  tests: readonly string[];
  cwd: string;
}

/** One runner's knowledge of its command line, exported by its package as `selection`. */
export interface RunnerSelection {
  runner: RunnerName;
  args: RunnerArgs;
  /** How the runner reads its command line (the package's runner/options): every argument `mate replay` passes is built from it. */
  options: RunnerOptions;
  /** The runner's arguments (after its entry point) that run just the input's files and tests, never watching or sharded. */
  select(input: SelectionInput): string[];
  /** The runner's arguments that run the whole command again (replay of a run whose reports named no test). */
  whole(input: Omit<SelectionInput, 'files' | 'tests'>): string[];
}

/** `whole` for a runner that takes its command line back as it was given: positionals, options, then what came after `--`. */
export const runAsGiven: RunnerSelection['whole'] = ({ positionals, options, tail }) => [
  ...positionals,
  ...options.flat(),
  ...tail,
];

/**
 * A mate-* CLI's canary reruns: the runner arguments it was given (read as
 * the runner's options say, without watch and shard flags), narrowed to each group of
 * damaged tests by the runner's selection, as `mate replay` narrows them.
 */
export function narrowedReruns(
  selection: RunnerSelection,
  given: readonly string[],
): (group: { files: readonly string[]; tests: readonly string[] }) => string[] {
  const split = splitArgs(withoutWatchAndShards(selection.args, given), selection.options);
  return (group) => selection.select({ ...split, files: group.files, tests: group.tests, cwd: process.cwd() });
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `^(?:a|b)$` over the tests' names as `name` spells them from a test path's titles, or undefined when none has one. */
export function testNamePattern(tests: readonly string[], name: (titles: string[]) => string): string | undefined {
  const names = [...new Set(tests.map((t) => name(t.replace(PROJECT_PREFIX, '').split(' > ').slice(1))))].filter(
    (n) => n.length > 0,
  );
  return names.length ? `^(?:${names.map(escapeRegExp).join('|')})$` : undefined;
}

/** The projects the tests' paths name (`[b] x.test.ts > t` -> `b`), each once: a selection passes each as an option's value (`--project=b`). */
export function testProjects(tests: readonly string[]): string[] {
  return [...new Set(tests.map((t) => PROJECT_PREFIX.exec(t)?.[1]).filter((p): p is string => p !== undefined))];
}
