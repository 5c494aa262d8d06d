// What `mate replay` takes from a record: the one place its rule is
// enforced. A report directory is data from wherever the run happened (a
// fork's pull request included), so every argument is judged, and passed,
// as the runner's own description of its options says it parses
// (run/runner-options.ts; each runner package owns its description, core
// owns node's): only options known to load nothing from elsewhere are
// taken (test selection, reporters, timeouts, --expose-gc-style flags),
// every path among them must, after links, stay inside the replay's
// directory and the checkout and out of the artifact's tree; a package is
// resolved from the checkout's node_modules and loaded as a module, never
// as a program. Code from the record (-e, a --require or loader from
// elsewhere, an inspector) is never taken; an option no description lists,
// or a package replay can't vouch for, only under --trust-record, and then
// still never code, a debugger or a path from elsewhere. What is left out
// is named, with why.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GuardConfigError } from '../errors';
import { shellLine, visible } from '../text/escape';
import { NODE_OPTIONS } from './node-options';
import { packageDir } from './replay-entry';
import type { OptionKind, RunnerOptions } from './runner-options';

interface Rule {
  kind: OptionKind;
  /** Names the runner knows without loading anything (`spec`, `stdout`). */
  builtins?: readonly string[];
  /** A debugger option that takes a value (`--inspect-port <n>`). */
  takesValue?: boolean;
  /** The runner splits the value on commas: each element is judged, and passed, alone. */
  commas?: boolean;
}

type Options = ReadonlyMap<string, Rule>;

/** `--test-name-pattern`, `--testNamePattern` and `--test_name_pattern` alike; short options as they are. */
const keyOf = (name: string): string =>
  /^-[^-]/.test(name) ? name : name.replace(/^--/, '').toLowerCase().replace(/[-_]/g, '');

/** A description's rows as a table by name. */
function options(desc: RunnerOptions): Options {
  const commas = new Set((desc.commaLists ?? '').split(/\s+/).filter(Boolean).map(keyOf));
  const out = new Map<string, Rule>();
  for (const [kind, names, builtins] of desc.rows) {
    for (const n of names.split(/\s+/).filter(Boolean)) {
      const takesValue = n.endsWith('=');
      const key = keyOf(takesValue ? n.slice(0, -1) : n);
      out.set(key, {
        kind,
        ...(builtins ? { builtins: builtins.split(' ') } : {}),
        ...(takesValue ? { takesValue } : {}),
        ...(commas.has(key) ? { commas: true } : {}),
      });
    }
  }
  return out;
}

/** How one command line is read: a runner's description, as tables. */
interface Surface {
  name: string;
  options: Options;
  /** node's options, for a runner that hands them on (mocha). */
  fallback?: Options;
  positional: RunnerOptions['positional'];
  /** The runner splits positionals on commas too (mocha's spec). */
  commaPositionals: boolean;
  debuggerWords?: readonly string[];
  optionsFirst?: boolean;
  /** The runner reads node's short options (`-pe` is `-p -e` to node). */
  readsNode: boolean;
}

const surfaces = new WeakMap<RunnerOptions, Surface>();

function surfaceOf(desc: RunnerOptions): Surface {
  let s = surfaces.get(desc);
  if (!s) {
    s = {
      name: desc.name,
      options: options(desc),
      positional: desc.positional,
      debuggerWords: desc.debuggerWords,
      optionsFirst: desc.optionsFirst,
      ...(desc.nodeOptions ? { fallback: options(NODE_OPTIONS) } : {}),
      commaPositionals: (desc.commaLists ?? '').split(/\s+/).includes('spec') && desc.positional === 'spec',
      readsNode: desc.nodeOptions === true || desc.rows === NODE_OPTIONS.rows,
    };
    surfaces.set(desc, s);
  }
  return s;
}

export interface TrustContext {
  /** The replay's working directory: every path stays inside it. */
  cwd: string;
  /** The checkout (where replay was started): packages and links resolve inside it. */
  root: string;
  /** The report directory the record came from. */
  reportDir: string;
  /** The artifact's own tree: the report directory, or the checkout's top-level folder holding it (nothing in it runs). */
  artifact: string;
  /** --trust-record: options not listed here, and packages replay can't vouch for, are taken as recorded. */
  trust: boolean;
}

/** `dir` itself or a path under it. */
export function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The real path of `p`, through its nearest existing ancestor (symbolic links followed). */
export function realOf(p: string): string {
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
 * The artifact's own tree: an artifact unpacked inside the checkout is
 * its whole top-level folder there (another shard's files, a `cwd` or
 * `node_modules` it carries are not the checkout's); elsewhere, the report
 * directory.
 */
export function artifactTree(reportDir: string, root: string): string {
  const real = realOf(path.resolve(reportDir));
  const realRoot = realOf(root);
  if (!inside(realRoot, real) || real === realRoot) return real;
  return path.join(realRoot, path.relative(realRoot, real).split(path.sep)[0]);
}

/**
 * The checkout replay runs in, from the directory it was started in: the
 * git work tree holding it (its nearest folder with a `.git`), so a replay
 * started in a subfolder runs as one started at the top; without git,
 * `here` itself. Found on this machine's disk, never taken from a record.
 */
export function checkoutOf(here: string): string {
  for (let dir = path.resolve(here); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(here);
  }
}

/**
 * How replay judges a record replayed from `here` (the checkout, or a
 * folder of it: checkoutOf): the working directory is the recorded one
 * where that is, after links, a directory of the checkout (its own, not the
 * artifact's, not inside node_modules), else the checkout itself; `note`
 * says why it is not the recorded one. A recorded directory above `here`
 * outside any git work tree is no checkout replay can vouch for: it says to
 * start from there.
 */
export function trustContext(
  recorded: string,
  here: string,
  reportDir: string,
  trust: boolean,
): TrustContext & { note?: string } {
  const top = checkoutOf(here);
  const root = realOf(top);
  const artifact = artifactTree(reportDir, root);
  if (
    inside(artifact, root) ||
    inside(realOf(path.resolve(reportDir)), root) ||
    inside(artifact, realOf(path.resolve(here)))
  ) {
    throw new GuardConfigError(
      `replay: run it from the project's checkout, not from inside the report directory ${reportDir}`,
    );
  }
  const ctx = { root, reportDir: path.resolve(reportDir), artifact, trust };
  if (!path.isAbsolute(recorded) || !fs.statSync(recorded, { throwIfNoEntry: false })?.isDirectory()) {
    return { ...ctx, cwd: top, note: `recorded in ${recorded}, which is not here: replaying in ${top}` };
  }
  const real = realOf(recorded);
  if (
    inside(root, real) &&
    !inside(artifact, real) &&
    !path.relative(root, real).split(path.sep).includes('node_modules')
  )
    return { ...ctx, cwd: real === root ? top : real };
  if (inside(real, root) && !fs.existsSync(path.join(top, '.git'))) {
    throw new GuardConfigError(
      `replay: the run was made in ${recorded}, above ${top}, which is no git checkout: run mate replay from ${recorded}`,
    );
  }
  return { ...ctx, cwd: top, note: `recorded in ${recorded}, which is not in ${top}: replaying here` };
}

const MAGIC = /[*?[\]{}]|[!+@]\(/;

/**
 * What a directory a runner would walk (a spec directory, a glob's
 * wildcard part) reaches that it must not: a node_modules directory, or a
 * link out of the checkout or into the artifact. A tree too large to look
 * through counts as reaching one.
 */
function reachesOut(dir: string, ctx: TrustContext): string | undefined {
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
      if (--budget < 0) return 'reaches too many files to look through';
      if (e.isSymbolicLink()) {
        const real = realOf(path.join(d, e.name));
        if (!inside(ctx.root, real) || inside(ctx.artifact, real))
          return `reaches ${path.join(d, e.name)}, a link out of the checkout`;
        continue;
      }
      if (!e.isDirectory()) continue;
      if (e.name === 'node_modules') return 'reaches into node_modules';
      if (e.name !== '.git') queue.push(path.join(d, e.name));
    }
  }
  return undefined;
}

/**
 * Why `value`, a path, may not be taken; undefined when it may: inside the
 * directory, after links inside the checkout, out of the artifact's tree
 * and out of node_modules (whose programs, loaded, read the runner's
 * arguments as their own). `loads`: the runner loads every file the path
 * names (mocha's specs, node --test's files), so a glob's wildcard
 * directories or a directory must reach no node_modules and no link out either.
 */
export function placeOf(value: string, ctx: TrustContext, loads = false): string | undefined {
  // A leading dash would be read as an option; `{`/`[`, as JSON (jest -c) or a glob's brace list; `..`, anywhere, climbs out of a glob.
  if (value === '' || value.startsWith('-') || /^[{[]/.test(value)) return 'not a path';
  if (value.split(/[\\/{},]/).includes('..')) return `outside ${ctx.cwd}`;
  // An absolute path inside the value (after a quote, `(`, `=`, a list's comma): whoever takes it apart finds a path from elsewhere.
  if (/["'(=,:;\s](\/|~\/)/.test(value)) return `names a path outside ${ctx.cwd}`;
  // `a=./x`, `a,b`: a runner that takes the value apart (an rc file's list, a reporter's option) finds each part a path.
  for (const part of value.split(/[=,]/)) {
    if (part !== value && /^[./~]|\//.test(part)) {
      const why = placeOf(part, ctx, loads);
      if (why) return `${part}: ${why}`;
    }
  }
  const abs = path.resolve(ctx.cwd, value);
  if (!inside(ctx.cwd, abs)) return `outside ${ctx.cwd}`;
  const real = realOf(abs);
  if (inside(ctx.reportDir, abs) || inside(ctx.artifact, abs) || inside(ctx.artifact, real))
    return 'in the report directory';
  if (!inside(ctx.root, real)) return `a link to ${real}, outside ${ctx.root}`;
  if (
    path.relative(ctx.cwd, abs).split(path.sep).includes('node_modules') ||
    path.relative(ctx.root, real).split(path.sep).includes('node_modules')
  )
    return 'inside node_modules';
  if (loads) {
    const segments = path.relative(ctx.cwd, abs).split(path.sep);
    const magic = segments.findIndex((seg) => MAGIC.test(seg));
    // A file the runner loads that is no glob must be there: a name that only looks like a path is nobody's file.
    if (magic < 0 && !fs.existsSync(abs)) return 'not a file of the checkout';
    const walks =
      magic >= 0 ? magic < segments.length - 1 : !!fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory();
    if (walks) return reachesOut(path.join(ctx.cwd, ...segments.slice(0, magic < 0 ? segments.length : magic)), ctx);
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
  return keys.some(
    (k) =>
      k === sub ||
      (k.includes('*') && sub.startsWith(k.slice(0, k.indexOf('*'))) && sub.endsWith(k.slice(k.indexOf('*') + 1))),
  );
}

/**
 * Why a package specifier may not be loaded. A package of the project may,
 * as what it offers to be loaded (its main entry, what it exports), never
 * as one of its programs: a bin loaded into the runner reads the runner's
 * command line as its own (`--require pnpm` would run `pnpm <arguments>`).
 * Only the checkout's own node_modules count (node would look above it too).
 */
function packageDoubt(spec: string, ctx: TrustContext): Refusal | undefined {
  const name = spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');
  const sub = `.${spec.slice(name.length)}`;
  const dir = packageDir(name, ctx.cwd, ctx.root);
  if (!dir) return { why: `not installed in ${ctx.root}`, doubt: true };
  if (inside(ctx.artifact, realOf(dir))) return { why: `${name} is installed in the report directory` };
  let pkg: { exports?: unknown; bin?: string | Record<string, string> };
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as typeof pkg;
  } catch {
    return { why: `${name} has no readable package.json`, doubt: true };
  }
  if (pkg.exports === undefined ? sub !== '.' : !exportsHas(pkg.exports, sub))
    return { why: `a file inside ${name}, not what it exports`, doubt: true };
  let file: string;
  try {
    file = createRequire(path.join(ctx.cwd, 'noop.js')).resolve(spec);
  } catch {
    return undefined; // exported for import only: node resolves it as it would have in the run
  }
  if (!inside(realOf(dir), realOf(file)))
    return { why: `${name} resolves to ${file}, not the package in ${dir}`, doubt: true };
  const bins = typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {});
  if (bins.some((b) => realOf(path.join(dir, b)) === realOf(file)))
    return { why: `${name}'s program (its bin), not a module`, doubt: true };
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

/** Names that start a debugger or run code in node or any runner (`--inspect-brk-node`, `--evaluate`): never taken, whatever the record says. */
const NEVER = /^(inspect|debug|eval|print|interactive|repl|execargv|nodeoption|loader|import|require|envfile|run$)/;

/**
 * Why an option no description lists may not be taken: a name that starts
 * a debugger or runs code, a short option where node reads options (`-pe`
 * is `-p -e`), or a value naming a path from elsewhere, never; anything
 * else, only under --trust-record.
 */
function unknownWhy(name: string, value: string | undefined, ctx: TrustContext, surface: Surface): Refusal {
  if (!/^--?[A-Za-z0-9][\w.-]*$/.test(name)) return { why: 'not an option name' };
  if (!name.startsWith('--') && surface.readsNode)
    return { why: `a short option replay does not know, where node reads -pe as -p -e` };
  // Spelled like node's code and REPL flags (-e, -p, -i, -pe): not taken from a record, whichever runner reads it.
  if (!name.startsWith('--') && /[epi]/.test(name.slice(1)))
    return { why: "a short option replay does not know, spelled like node's -e, -p or -i" };
  if (NEVER.test(keyOf(name).replace(/^no/, ''))) return { why: 'a debugger or code' };
  // An absolute path or a climb anywhere in the value (inside code, JSON, a list): from elsewhere.
  const away = /(?:^|[^\w.-])((?:\/[^/\s]|~\/|\.\.[\\/])[^\s"',;)\]]*)/.exec(value ?? '');
  if (away) return { why: `${away[1]} is outside the checkout` };
  for (const piece of (value ?? '').split(/[,=;:]/)) {
    if (!/^(\.|\/|~|file:)|[\\/]/.test(piece)) continue;
    const place = piece.startsWith('~')
      ? 'outside the checkout'
      : piece.startsWith('file:')
        ? 'a file URL'
        : placeOf(piece, ctx);
    if (place)
      return {
        why: `${piece} is ${place.startsWith('outside') || place.startsWith('a ') ? place : `not to be taken (${place})`}`,
      };
  }
  return { why: `not a ${surface.name} replay knows`, doubt: true };
}

/** Why a recorded option and its value may not be taken; undefined when they may. */
function why(
  rule: Rule | undefined,
  name: string,
  value: string | undefined,
  ctx: TrustContext,
  surface: Surface,
): Refusal | undefined {
  if (!rule) return unknownWhy(name, value, ctx, surface);
  switch (rule.kind) {
    case 'flag':
      return value === undefined || /^[\w.-]*$/.test(value) ? undefined : { why: 'a flag with a value' };
    case 'code':
      return { why: 'code from the record' };
    case 'debugger':
      return { why: 'a debugger' };
    case 'output':
      return value !== undefined && rule.builtins?.includes(value) ? undefined : { why: 'a file the run would write' };
  }
  if (value === undefined) return { why: 'no value' };
  switch (rule.kind) {
    case 'value':
      // A value that reads as an option would be one to a runner that takes it apart again.
      if (value.startsWith('-')) return { why: 'a value that reads as an option' };
      // A number or a pattern holds no path after a quote, `(`, `=` or a comma: code that names one does.
      return /["'(=,:;\s](\/|~\/)/.test(value) ? { why: 'a value that names a path from elsewhere' } : undefined;
    case 'path':
    case 'spec':
      return refuse(placeOf(value, ctx, rule.kind === 'spec'));
    case 'file': {
      const place = placeOf(value, ctx);
      if (place) return { why: place };
      // A file the runner runs or reads settings from: a real file of the checkout, not a link (to one that may change).
      return fs.lstatSync(path.resolve(ctx.cwd, value), { throwIfNoEntry: false })?.isFile()
        ? undefined
        : { why: 'not a file of the checkout' };
    }
    case 'module':
      return moduleWhy(value, rule, ctx);
    case 'node': {
      const option = value.startsWith('-') ? value : `--${value}`;
      const [n, inline] = splitInline(option);
      const node = surfaceOf(NODE_OPTIONS);
      return why(lookup(node.options, n), n, inline, ctx, node);
    }
  }
}

function splitInline(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return arg.startsWith('--') && eq > 2 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}

/**
 * An argument as `surface` reads it: `--name=value`, and `-w=2` where the
 * runner's own parser (yargs, cac) reads a short option's inline value and
 * its description lists that option; node reads `-r=x` as no option at all.
 */
function splitFor(arg: string, surface: Surface): [string, string | undefined] {
  const eq = arg.indexOf('=');
  if (!surface.readsNode || surface.fallback) {
    if (/^-[A-Za-z]=/.test(arg) && surface.options.has(keyOf(arg.slice(0, eq))))
      return [arg.slice(0, eq), arg.slice(eq + 1)];
  }
  return splitInline(arg);
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
const takesValue = (rule: Rule | undefined): boolean =>
  rule ? rule.kind !== 'flag' && (rule.kind !== 'debugger' || !!rule.takesValue) : true;

/** A recorded command line, judged: what is taken (positionals apart from options), what is not. */
export interface Judged {
  positionals: string[];
  /** Each option with its value (one or two arguments), built from the runner's description: one element of a comma list each. */
  options: string[][];
  /** What was left out, each with why: `--eval "..." (code from the record)`. */
  leftOut: string[];
  /** What --trust-record took though replay does not vouch for it. */
  trusted: string[];
}

export { shellLine, shellWord } from '../text/escape';

/** The elements of a value the runner splits on commas (mocha: `a, b` is two). */
const commaElements = (value: string): string[] => value.split(/ *, */).filter((v) => v !== '');

/** Judges `args` (a command line without `--`) as the runner `desc` describes reads it. */
export function judgeArgs(args: readonly string[], desc: RunnerOptions, ctx: TrustContext): Judged {
  const surface = surfaceOf(desc);
  const out: Judged = { positionals: [], options: [], leftOut: [], trusted: [] };
  const leave = (tokens: string[], reason: string) => out.leftOut.push(`${shellLine(tokens)} (${visible(reason)})`);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-') || arg === '-') {
      for (const p of surface.commaPositionals ? commaElements(arg) : [arg]) {
        const reason =
          surface.positional === 'none'
            ? `not a ${surface.name}`
            : surface.debuggerWords?.includes(p)
              ? 'a debugger'
              : placeOf(p, ctx, surface.positional === 'spec');
        if (reason) leave([p], reason);
        else out.positionals.push(p);
      }
      continue;
    }
    const [name, inline] = splitFor(arg, surface);
    const rule = lookup(surface.options, name) ?? (surface.fallback && lookup(surface.fallback, name));
    // The value: inline, else the next argument unless it is an option (which a runner would read as one).
    let value = inline;
    if (inline === undefined && takesValue(rule) && i + 1 < args.length && !args[i + 1].startsWith('-'))
      value = args[++i];
    // Each element of a comma list is its own option occurrence: judged, and passed, alone.
    const values = rule?.commas && value !== undefined ? commaElements(value) : [value];
    for (const v of values) {
      const tokens = v === undefined ? [name] : inline !== undefined ? [`${name}=${v}`] : [name, v];
      const refusal = why(rule, name, v, ctx, surface);
      if (refusal === undefined) out.options.push(tokens);
      else if (refusal.doubt && ctx.trust) {
        out.options.push(tokens);
        out.trusted.push(shellLine(tokens));
      } else leave(tokens, refusal.doubt ? `${refusal.why}: --trust-record takes it` : refusal.why);
    }
  }
  return out;
}

/**
 * A command line as the runner `desc` describes reads it, positionals
 * apart from options (each with its value), nothing judged: a rerun of the
 * run's own command (a mate-* CLI's), which replay's trust has no say in.
 */
export function splitArgs(
  args: readonly string[],
  desc: RunnerOptions,
): Pick<Judged, 'positionals' | 'options'> & { tail: string[] } {
  const surface = surfaceOf(desc);
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
    const [name, inline] = splitFor(arg, surface);
    const rule = lookup(surface.options, name) ?? (surface.fallback && lookup(surface.fallback, name));
    const tokens = [arg];
    if (inline === undefined && takesValue(rule) && i + 1 < args.length && !args[i + 1].startsWith('-'))
      tokens.push(args[++i]);
    out.options.push(tokens);
  }
  return out;
}

/** The judged arguments in the order the runner reads them safely: positionals first (an array option can't swallow one), or node's options first. */
export function assemble(judged: Pick<Judged, 'positionals' | 'options'>, desc: RunnerOptions): string[] {
  const opts = judged.options.flat();
  return desc.optionsFirst ? [...opts, ...judged.positionals] : [...judged.positionals, ...opts];
}
