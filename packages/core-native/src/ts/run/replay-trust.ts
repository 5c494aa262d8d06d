// What `mate replay` takes from a record. A report directory is data from
// wherever the run happened (a fork's pull request included), so only the
// Node options and runner arguments known to load nothing from elsewhere
// are taken (test selection, reporters, timeouts, --expose-gc-style
// flags), and every path among them must stay inside the replay's
// directory and out of the report directory; a package is loaded as a
// module, never as a program. Code from the record (-e, a --require or
// loader from elsewhere, an inspector) is never taken; an option not
// listed here, or a package replay can't vouch for, only under
// --trust-record. What is left out is named, with why.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GuardConfigError } from '../errors';
import { packageDir } from './replay-entry';

/** How an option's value is judged. */
type Kind =
  | 'flag' // no value (an inline `=true` at most)
  | 'value' // a number, a name, a pattern: nothing is loaded from it
  | 'path' // a file or directory, maybe not there yet: inside the directory
  | 'spec' // files the runner loads, maybe a glob or a directory (mocha --spec): inside, never reaching node_modules
  | 'file' // a file that is read (a config): inside the directory, and there
  | 'module' // loaded and run: a built-in name, a package of the project, or a file inside
  | 'node' // a Node option handed on (mocha -n, vitest --execArgv)
  | 'output' // a file the run writes (a report): the replay prints to the terminal, it writes nothing a record names
  | 'code' // code from the record: never
  | 'debugger'; // an inspector or a REPL: never

interface Rule {
  kind: Kind;
  /** Names the runner knows without loading anything (`spec`, `stdout`). */
  builtins?: readonly string[];
  /** A debugger option that takes a value (`--inspect-port <n>`). */
  takesValue?: boolean;
}

type Options = ReadonlyMap<string, Rule>;

/** `--test-name-pattern`, `--testNamePattern` and `--test_name_pattern` alike; short options as they are. */
const keyOf = (name: string): string => (/^-[^-]/.test(name) ? name : name.replace(/^--/, '').toLowerCase().replace(/[-_]/g, ''));

/** A table from lines `[kind, 'names...', 'builtins...']`; a name ending in `=` takes a value, one ending in `.*` covers its dotted forms. */
function options(rows: readonly (readonly [Kind, string, string?])[]): Options {
  const out = new Map<string, Rule>();
  for (const [kind, names, builtins] of rows) {
    for (const n of names.split(/\s+/).filter(Boolean)) {
      const takesValue = n.endsWith('=');
      out.set(keyOf(takesValue ? n.slice(0, -1) : n), { kind, ...(builtins ? { builtins: builtins.split(' ') } : {}), ...(takesValue ? { takesValue } : {}) });
    }
  }
  return out;
}

export const NODE_OPTIONS = options([
  ['flag', `--expose-gc --enable-source-maps --no-warnings --trace-warnings --no-deprecation --trace-deprecation --throw-deprecation
    --pending-deprecation --trace-uncaught --trace-exit --abort-on-uncaught-exception --experimental-vm-modules
    --experimental-strip-types --experimental-transform-types --experimental-require-module --experimental-detect-module
    --experimental-import-meta-resolve --experimental-wasm-modules --experimental-test-coverage --experimental-test-module-mocks
    --experimental-test-snapshots --preserve-symlinks --preserve-symlinks-main --zero-fill-buffers --frozen-intrinsics --jitless
    --allow-natives-syntax --use-strict --gc-global --test --test-only --test-force-exit --experimental-fetch
    --experimental-global-navigator --experimental-websocket`],
  ['value', `--max-old-space-size --max-semi-space-size --stack-size --stack-trace-limit --unhandled-rejections --conditions -C
    --experimental-default-type --disable-warning --title --dns-result-order --test-name-pattern --test-skip-pattern --test-timeout
    --test-concurrency --test-isolation --test-shard --test-coverage-include --test-coverage-exclude --test-coverage-branches
    --test-coverage-functions --test-coverage-lines`],
  ['module', '--require -r --import --loader --experimental-loader'],
  ['module', '--test-reporter', 'spec tap dot junit lcov'],
  ['output', '--test-reporter-destination', 'stdout stderr'],
  ['file', '--env-file --env-file-if-exists'],
  ['code', '-e --eval -p --print --run --snapshot-blob'],
  ['debugger', '-i --interactive --inspect --inspect-brk --inspect-wait --debug --debug-brk --inspect-port= --debug-port= --inspect-publish-uid='],
]);

const MOCHA_OPTIONS = options([
  ['flag', `--allow-uncaught -A --async-only -b --bail --check-leaks -c --color --colors -C --no-colors --delay --diff --dry-run --exit
    --fail-zero --fail-hook-affected-tests --forbid-only --forbid-pending --full-trace --inline-diffs -i --invert -p --parallel
    --recursive -S --sort --posix-exit-codes --pass-on-failing-test-suite --clear-screen --no-config --no-package --no-opts`],
  ['value', `-g --grep -f --fgrep -t --timeout --timeouts -s --slow -j --jobs --retries --extension --ignore --exclude --global
    --globals --watch-files --watch-ignore`],
  ['module', '-r --require'],
  ['module', '-u --ui', 'bdd tdd qunit exports'],
  ['module', '-R --reporter', 'spec dot nyan tap landing list progress json json-stream min doc markdown xunit base'],
  ['file', '--config --package --file'],
  ['spec', '--spec'],
  ['node', '-n --node-option'],
]);

const JEST_OPTIONS = options([
  ['flag', `--ci -i --runInBand -b --bail --cache --color --colors --detectOpenHandles --detectLeaks --errorOnDeprecated -e --expand
    --forceExit --injectGlobals --logHeapUsage --noStackTrace --passWithNoTests --randomize --resetMocks --resetModules
    --restoreMocks --clearMocks --runTestsByPath --showSeed --silent --testLocationInResults --useStderr --verbose --watchman
    --workerThreads --coverage --collectCoverage --json`],
  ['value', `-t --testNamePattern --testPathPatterns --testPathPattern --testPathIgnorePatterns -w --maxWorkers --maxConcurrency
    --testTimeout --seed --shard --selectProjects --ignoreProjects --testMatch --testRegex --openHandlesTimeout
    --testFailureExitCode --collectCoverageFrom --coverageProvider`],
  ['module', '--reporters', 'default summary github-actions'],
  ['module', '--testEnvironment --env', 'node jsdom'],
  ['file', '-c --config'],
  ['path', '--rootDir --roots'],
  ['output', '--outputFile --coverageDirectory --cacheDirectory'],
]);

const VITEST_OPTIONS = options([
  ['flag', `--run --passWithNoTests --allowOnly --globals --dom --isolate --fileParallelism --coverage --coverage.enabled --silent
    --hideSkippedTests --printConsoleTrace --logHeapUsage --clearScreen --expandSnapshotDiff --includeTaskLocation --standalone
    --color --typecheck --sequence.shuffle --sequence.concurrent --dangerouslyIgnoreUnhandledErrors`],
  ['value', `-t --testNamePattern --bail --retry --testTimeout --hookTimeout --teardownTimeout --maxWorkers --minWorkers
    --maxConcurrency --shard --project --exclude --mode --sequence.seed --sequence.hooks --sequence.setupFiles --configLoader
    --slowTestThreshold`],
  ['module', '--reporter', 'default basic verbose dot json junit tap tap-flat hanging-process github-actions blob tree'],
  ['module', '--environment', 'node jsdom happy-dom edge-runtime'],
  ['module', '--pool', 'threads forks vmThreads vmForks'],
  ['path', '--dir -r --root'],
  ['output', '--outputFile --outputFile.*'],
  ['file', '-c --config'],
  ['node', '--execArgv'],
  ['debugger', '--inspect --inspectBrk --inspect-brk'],
]);

/** How one command line is read: its options, and what its positional arguments are. */
export interface Surface {
  name: string;
  options: Options;
  /** Options that the command hands on to node (mocha takes node's flags too). */
  fallback?: Options;
  /** Positional arguments: files and globs it loads, patterns or filters over the files its config includes, or none at all (node's own options). */
  positional: 'spec' | 'path' | 'none';
  /** Positional words that start a debugger (`mocha inspect`). */
  debuggerWords?: readonly string[];
  /** The runner reads options before its first positional only (node): options go first. */
  optionsFirst?: boolean;
}

export const SURFACES = {
  node: { name: 'Node option', options: NODE_OPTIONS, positional: 'none', optionsFirst: true },
  'node-test': { name: 'node --test argument', options: NODE_OPTIONS, positional: 'spec', optionsFirst: true },
  mocha: { name: 'mocha argument', options: MOCHA_OPTIONS, fallback: NODE_OPTIONS, positional: 'spec', debuggerWords: ['inspect'] },
  jest: { name: 'jest argument', options: JEST_OPTIONS, positional: 'path' },
  vitest: { name: 'vitest argument', options: VITEST_OPTIONS, positional: 'path' },
} satisfies Record<string, Surface>;

export interface TrustContext {
  /** The replay's working directory: every path stays inside it. */
  cwd: string;
  /** The report directory the record came from (the artifact): nothing in it runs. */
  reportDir: string;
  /** --trust-record: options not listed here, and packages replay can't vouch for, are taken as recorded. */
  trust: boolean;
}

/** `dir` itself or a path under it. */
export function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The real path of `p`, through its nearest existing ancestor (symbolic links followed). */
function realOf(p: string): string {
  const rest: string[] = [];
  let at = p;
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), ...rest.reverse());
    } catch {
      const up = path.dirname(at);
      if (up === at) return p;
      rest.push(path.basename(at));
      at = up;
    }
  }
}

/**
 * The replay's working directory, "the checkout" every path must stay in:
 * the recorded one where it is `here` or a directory under it, else `here`
 * (a record can't send the replay to a directory of its choosing, where
 * node_modules would be someone else's). `note` says why it is not the recorded one.
 */
export function replayDir(recorded: string, here: string, reportDir: string): { cwd: string; note?: string } {
  const realReport = realOf(reportDir);
  if (inside(realReport, realOf(here))) {
    throw new GuardConfigError(`replay: run it from the project's checkout, not from inside the report directory ${reportDir}`);
  }
  if (!path.isAbsolute(recorded) || !fs.statSync(recorded, { throwIfNoEntry: false })?.isDirectory()) {
    return { cwd: here, note: `recorded in ${recorded}, which is not here: replaying in ${here}` };
  }
  const real = realOf(recorded);
  const realHere = realOf(here);
  if (inside(realHere, real) && !inside(realReport, real) && !path.relative(realHere, real).split(path.sep).includes('node_modules')) return { cwd: recorded };
  return { cwd: here, note: `recorded in ${recorded}, which is not in ${here}: replaying here` };
}

const MAGIC = /[*?[\]{}]|[!+@]\(/;

/** Whether `dir` holds a node_modules directory, links not followed (a tree too large to look through counts as holding one). */
function holdsNodeModules(dir: string): boolean {
  let budget = 20000;
  const queue = [dir];
  for (let d = queue.pop(); d !== undefined; d = queue.pop()) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (--budget < 0) return true;
      if (!e.isDirectory()) continue;
      if (e.name === 'node_modules') return true;
      if (e.name !== '.git') queue.push(path.join(d, e.name));
    }
  }
  return false;
}

/**
 * Why `value`, a path, may not be taken; undefined when it may: inside the
 * directory, out of the report directory and out of node_modules (whose
 * programs, loaded, read the runner's arguments as their own). `loads`:
 * the runner loads every file the path names (mocha's specs, node --test's
 * files), so a glob's wildcard directories or a directory must not reach
 * node_modules either.
 */
export function placeOf(value: string, ctx: TrustContext, loads = false): string | undefined {
  // A leading dash would be read as an option; `{`/`[`, as JSON (jest -c) or a glob's brace list; `..`, anywhere, climbs out of a glob.
  if (value === '' || value.startsWith('-') || /^[{[]/.test(value)) return 'not a path';
  if (value.split(/[\\/{},]/).includes('..')) return `outside ${ctx.cwd}`;
  const abs = path.resolve(ctx.cwd, value);
  if (!inside(ctx.cwd, abs)) return `outside ${ctx.cwd}`;
  if (inside(ctx.reportDir, abs) || inside(realOf(ctx.reportDir), realOf(abs))) return 'in the report directory';
  const segments = path.relative(ctx.cwd, abs).split(path.sep);
  if (segments.includes('node_modules')) return 'inside node_modules';
  if (loads) {
    const magic = segments.findIndex((seg) => MAGIC.test(seg));
    const reaches = magic >= 0 ? magic < segments.length - 1 : !!fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory();
    if (reaches && holdsNodeModules(path.join(ctx.cwd, ...segments.slice(0, magic < 0 ? segments.length : magic)))) return 'reaches into node_modules';
  }
  return undefined;
}

const BARE = /^(@[\w.-]+\/)?[\w.-]+(\/[\w.@+-]+)*$/;

/** Why something is not taken; `doubt`: replay cannot vouch for it (rather than knows it loads something from elsewhere), and --trust-record takes it. */
interface Refusal {
  why: string;
  doubt?: true;
}

const refuse = (why: string | undefined): Refusal | undefined => (why === undefined ? undefined : { why });

/** Whether a package's `exports` names `sub` (`.`, `./register`, a `./*` pattern). */
function exportsHas(exp: unknown, sub: string): boolean {
  if (typeof exp === 'string' || Array.isArray(exp)) return sub === '.';
  if (!exp || typeof exp !== 'object') return false;
  const keys = Object.keys(exp);
  if (!keys.some((k) => k.startsWith('.'))) return sub === '.';
  return keys.some((k) => k === sub || (k.includes('*') && sub.startsWith(k.slice(0, k.indexOf('*'))) && sub.endsWith(k.slice(k.indexOf('*') + 1))));
}

/**
 * Why a package specifier may not be loaded. A package of the project may,
 * as what it offers to be loaded (its main entry, what it exports), never
 * as one of its programs: a bin loaded into the runner reads the runner's
 * command line as its own (`--require pnpm` would run `pnpm <arguments>`).
 */
function packageDoubt(spec: string, ctx: TrustContext): Refusal | undefined {
  const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
  const sub = `.${spec.slice(name.length)}`;
  const dir = packageDir(name, ctx.cwd);
  if (!dir) return { why: `not installed in ${ctx.cwd}`, doubt: true };
  let pkg: { exports?: unknown; bin?: string | Record<string, string> };
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as typeof pkg;
  } catch {
    return { why: `${name} has no readable package.json`, doubt: true };
  }
  if (pkg.exports === undefined ? sub !== '.' : !exportsHas(pkg.exports, sub)) return { why: `a file inside ${name}, not what it exports`, doubt: true };
  let file: string;
  try {
    file = createRequire(path.join(ctx.cwd, 'noop.js')).resolve(spec);
  } catch {
    return undefined; // exported for import only: node resolves it as it would have in the run
  }
  const bins = typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {});
  if (bins.some((b) => realOf(path.join(dir, b)) === realOf(file))) return { why: `${name}'s program (its bin), not a module`, doubt: true };
  return undefined;
}

/** Why a module specifier may not be loaded; undefined when it may. */
function moduleWhy(value: string, rule: Rule, ctx: TrustContext): Refusal | undefined {
  if (rule.builtins?.includes(value) || value.startsWith('node:')) return undefined;
  if (value.startsWith('file:')) {
    try {
      return refuse(placeOf(fileURLToPath(value), ctx));
    } catch {
      return { why: 'not a file URL' };
    }
  }
  // data:, http(s): and any other scheme: the code is in the record or elsewhere.
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) return { why: 'code from the record' };
  if (value.startsWith('.') || path.isAbsolute(value)) return refuse(placeOf(value, ctx));
  // A package of the project (node resolves it through its node_modules); `pkg/../../x` climbs out.
  if (BARE.test(value) && !value.split('/').includes('..')) return packageDoubt(value, ctx);
  return { why: 'not a package name or a path' };
}

/** Why a recorded option and its value may not be taken; undefined when they may. */
function why(rule: Rule | undefined, value: string | undefined, ctx: TrustContext, surface: string): Refusal | undefined {
  if (!rule) return { why: `not a ${surface} replay knows`, doubt: true };
  switch (rule.kind) {
    case 'flag':
      return value === undefined || /^[\w.-]*$/.test(value) ? undefined : { why: 'a flag with a value' };
    case 'code':
      return { why: 'code from the record' };
    case 'debugger':
      return { why: 'a debugger' };
  }
  if (value === undefined) return { why: 'no value' };
  switch (rule.kind) {
    case 'value':
      return undefined;
    case 'path':
    case 'spec':
      return refuse(placeOf(value, ctx, rule.kind === 'spec'));
    case 'output':
      return rule.builtins?.includes(value) ? undefined : { why: 'a file the run would write' };
    case 'file': {
      const place = placeOf(value, ctx);
      if (place) return { why: place };
      return fs.statSync(path.resolve(ctx.cwd, value), { throwIfNoEntry: false })?.isFile() ? undefined : { why: 'not a file here' };
    }
    case 'module':
      return moduleWhy(value, rule, ctx);
    case 'node': {
      const option = value.startsWith('-') ? value : `--${value}`;
      const [name, inline] = splitInline(option);
      return why(lookup(NODE_OPTIONS, name), inline, ctx, 'Node option');
    }
  }
}

function splitInline(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return arg.startsWith('--') && eq > 2 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}

function lookup(table: Options, name: string): Rule | undefined {
  const key = keyOf(name);
  const hit = table.get(key) ?? (key.includes('.') ? table.get(`${key.slice(0, key.indexOf('.'))}.*`) : undefined);
  if (hit) return hit;
  // --no-<flag>
  if (name.startsWith('--no-')) {
    const base = table.get(keyOf(`--${name.slice(5)}`));
    if (base?.kind === 'flag') return base;
  }
  return undefined;
}

/** Whether an option reads the next argument as its value (one replay does not know may: its value goes with it). */
const takesValue = (rule: Rule | undefined): boolean => (rule ? rule.kind !== 'flag' && (rule.kind !== 'debugger' || !!rule.takesValue) : true);

/** A recorded command line, judged: what is taken (positionals apart from options), what is not. */
export interface Judged {
  positionals: string[];
  /** Each option with its value, as recorded (one or two arguments). */
  options: string[][];
  /** What was left out, each with why: `--eval "..." (code from the record)`. */
  leftOut: string[];
  /** What --trust-record took though replay does not vouch for it. */
  trusted: string[];
}

const SAFE_WORD = /^[\w@%+=:,./-]+$/;
/** An argument as a shell would need it. */
export const shellWord = (arg: string): string => (SAFE_WORD.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
export const shellLine = (args: readonly string[]): string => args.map(shellWord).join(' ');

/** Judges `args` (a command line without `--`) as `surface` reads it. */
export function judgeArgs(args: readonly string[], surface: Surface, ctx: TrustContext): Judged {
  const out: Judged = { positionals: [], options: [], leftOut: [], trusted: [] };
  const leave = (tokens: string[], reason: string) => out.leftOut.push(`${shellLine(tokens)} (${reason})`);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-') || arg === '-') {
      const reason = surface.positional === 'none' ? `not a ${surface.name}` : surface.debuggerWords?.includes(arg) ? 'a debugger' : placeOf(arg, ctx, surface.positional === 'spec');
      if (reason) leave([arg], reason);
      else out.positionals.push(arg);
      continue;
    }
    const [name, inline] = splitInline(arg);
    const rule = lookup(surface.options, name) ?? (surface.fallback && lookup(surface.fallback, name));
    // The value: inline, else the next argument unless it is an option (which a runner would read as one).
    const tokens = [arg];
    let value = inline;
    if (inline === undefined && takesValue(rule) && i + 1 < args.length && !args[i + 1].startsWith('-')) {
      value = args[++i];
      tokens.push(value);
    }
    const refusal = why(rule, value, ctx, surface.name);
    if (refusal === undefined) out.options.push(tokens);
    else if (refusal.doubt && ctx.trust) {
      out.options.push(tokens);
      out.trusted.push(shellLine(tokens));
    } else leave(tokens, refusal.doubt ? `${refusal.why}: --trust-record takes it` : refusal.why);
  }
  return out;
}

/**
 * A command line as `surface` reads it, positionals apart from options
 * (each with its value), nothing judged: a rerun of the run's own command
 * (a mate-* CLI's), which replay's trust has no say in.
 */
export function splitArgs(args: readonly string[], surface: Surface): Pick<Judged, 'positionals' | 'options'> & { tail: string[] } {
  const out: Pick<Judged, 'positionals' | 'options'> & { tail: string[] } = { positionals: [], options: [], tail: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      out.tail = args.slice(i);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.positionals.push(arg);
      continue;
    }
    const [name, inline] = splitInline(arg);
    const rule = lookup(surface.options, name) ?? (surface.fallback && lookup(surface.fallback, name));
    const tokens = [arg];
    if (inline === undefined && takesValue(rule) && i + 1 < args.length && !args[i + 1].startsWith('-')) tokens.push(args[++i]);
    out.options.push(tokens);
  }
  return out;
}

/** The judged arguments in the order the runner reads them safely: positionals first (an array option can't swallow one), or node's options first. */
export function assemble(judged: Pick<Judged, 'positionals' | 'options'>, surface: Surface): string[] {
  const opts = judged.options.flat();
  return surface.optionsFirst ? [...opts, ...judged.positionals] : [...judged.positionals, ...opts];
}
