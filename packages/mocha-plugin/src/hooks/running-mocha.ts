// The Mocha that runs this process, and the command line its user wrote.
// Its files are taken from its own package (found from its executable), so
// that a copy installed under another name (an npm alias, pnpm's store) is
// the one used, not whichever `mocha` resolves first.
import * as fs from 'node:fs';
import * as path from 'node:path';

function realpath(file: string): string | undefined {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}

/** The running Mocha's package directory: the nearest package named mocha above its executable. */
export function runningMochaRoot(main: string | undefined = process.argv[1]): string | undefined {
  const real = main ? realpath(main) : undefined;
  if (!real) return undefined;
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'mocha') return dir;
    } catch {
      // no package.json here: go up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Whether this process's main module is one of these files of the running Mocha. */
export function mainIsMochaFile(files: readonly string[]): boolean {
  const root = runningMochaRoot();
  const main = process.argv[1] ? realpath(process.argv[1]) : undefined;
  return !!root && !!main && files.some((f) => realpath(path.join(root, f)) === main);
}

/**
 * The first of `files` (paths inside a mocha package) that loads and passes
 * `fits`: from the running Mocha, else the project's, else the one next to us.
 */
export function loadFromMocha<T>(files: readonly string[], fits: (mod: unknown) => mod is T): T | undefined {
  const root = runningMochaRoot();
  const candidates = [
    ...(root ? files.map((f) => path.join(root, f)) : []),
    ...[process.cwd(), path.join(__dirname, '..', '..')].flatMap((base) =>
      files.map((f) => ({ request: `mocha/${f}`, base })),
    ),
  ];
  for (const c of candidates) {
    try {
      const mod: unknown = require(typeof c === 'string' ? c : require.resolve(c.request, { paths: [c.base] }));
      if (fits(mod)) return mod;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

// Mocha re-spawns itself when given node flags (--expose-gc, --node-option,
// inspect): bin/mocha runs `node <node flags> lib/cli/cli.js <its merged
// options written out again>`. That command line is not the user's: rc
// keys are flags there (they would beat MATE_MOCHA_GUARD_*), and Mocha
// 10/11 write `--guard-native=*x.node` as two words, which plain mocha must
// refuse from a user. The user's words are the parent's, which waits for
// this process: Linux shows them in /proc.
const RESPAWNED_MAIN = ['lib/cli/cli.js', 'lib/cli/cli.cjs'];
const MOCHA_BIN = ['bin/mocha.js', 'bin/mocha.cjs', 'bin/mocha'];

/** The words after the running Mocha's bin/mocha in the parent's command line, if the parent is that. */
function parentMochaArgv(root: string): string[] | undefined {
  let words: string[];
  try {
    words = fs.readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
  if (words[words.length - 1] === '') words.pop();
  const bins = new Set(MOCHA_BIN.map((b) => realpath(path.join(root, b))).filter((b) => b !== undefined));
  // The parent's cwd is ours (Mocha spawns without one): relative paths resolve alike.
  const at = words.findIndex((w, i) => i > 0 && bins.has(realpath(path.resolve(w)) ?? ''));
  return at < 0 ? undefined : words.slice(at + 1);
}

export interface UserArgv {
  argv: string[];
  /**
   * The words are Mocha's own rewrite of its options (its re-spawned child,
   * the parent's unreadable): each value sits after its flag, rc keys
   * included; a value as a second word is Mocha's doing, not the user's.
   */
  rewritten: boolean;
}

/** The mocha arguments the user gave: this process's, or in Mocha's re-spawned child its parent's. */
export function userMochaArgv(): UserArgv {
  const own = process.argv.slice(2);
  if (!mainIsMochaFile(RESPAWNED_MAIN)) return { argv: own, rewritten: false };
  const parent = parentMochaArgv(runningMochaRoot()!);
  return parent ? { argv: parent, rewritten: false } : { argv: own, rewritten: true };
}
