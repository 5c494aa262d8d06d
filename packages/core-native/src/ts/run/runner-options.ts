// How a runner reads its command line, as data: each runner package
// describes its own options (packages/<runner>/src/runner/options.ts);
// core holds only this type and node's own options (run/node-options.ts).
// `mate replay` builds every argument it passes from such a description
// (run/replay-trust.ts): an option it does not find there is taken only
// under --trust-record, code and debuggers never.

/** How an option's value is judged. */
export type OptionKind =
  | 'flag' // no value (an inline `=true` at most)
  | 'value' // a number, a name, a pattern: nothing is loaded from it
  | 'path' // a file or directory, maybe not there yet: inside the checkout
  | 'spec' // files the runner loads, maybe a glob or a directory (mocha --spec): inside, never reaching node_modules
  | 'file' // a file the runner reads and runs (a config, --env-file): a real file of the checkout
  | 'module' // loaded and run: a built-in name, a package of the project, or a file inside
  | 'node' // a Node option handed on (mocha -n, vitest --execArgv)
  | 'output' // a file the run writes (a report): the replay prints to the terminal, it writes nothing a record names
  | 'code' // code from the record: never
  | 'debugger'; // an inspector or a REPL: never

/**
 * One line of a description: `[kind, 'names...', 'builtins...']`. A name
 * ending in `=` is a debugger option that takes a value; one ending in
 * `.*` covers its dotted forms (`--outputFile.json`). Long names match
 * however the runner spells them (`--testNamePattern`, `--test-name-pattern`).
 */
export type OptionRow = readonly [OptionKind, string, string?];

/** A runner's command line, described by the runner's own package. */
export interface RunnerOptions {
  /** What one of its arguments is called in a message: `jest argument`. */
  name: string;
  rows: readonly OptionRow[];
  /** Options whose value the runner splits on commas (mocha's array options): each element is judged alone and passed as its own option. */
  commaLists?: string;
  /** Positional arguments: files and globs it loads, patterns or filters over the files its config includes, or none at all (node's own options). */
  positional: 'spec' | 'path' | 'none';
  /** The runner takes node's options too (mocha hands them to node). */
  nodeOptions?: boolean;
  /** Positional words that start a debugger (`mocha inspect`). */
  debuggerWords?: readonly string[];
  /** The runner reads options before its first positional only (node): options go first. */
  optionsFirst?: boolean;
}
