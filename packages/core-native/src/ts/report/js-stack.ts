// JS allocation and free stacks cut down to the user's own frames. A stack
// captured in a test worker is mostly the runner's machinery (jest-circus
// calls a test through seven of its own frames) plus node:internal and
// mate-guard's own frames; the user's frames keep their order and the rest
// is counted, not shown.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type OwnPackage, ownPackages } from '../own-packages';

/** Packages whose frames are machinery whatever the runner, matched as `/node_modules/<name>/`: mate-guard's own and Node's source-map hook. The runners' are their adapters' (package.json `mateGuard.stackRoots`). */
const CORE_STACK_ROOTS: readonly string[] = ['@mate-guard/*', 'source-map-support'];

export interface JsStackTrimOptions {
  /**
   * Directories whose frames are dropped as well. Default: mate-guard's own
   * package directories (in this repository, `packages/*`) and the
   * runners' directories as resolved from `cwd` (linked installs).
   */
  dropDirs?: readonly string[];
  /** Packages whose frames are dropped (`node_modules/<name>/`, `*` within one segment). Default: machineryPackages(cwd). */
  packages?: readonly string[];
  cwd?: string;
}

export interface TrimmedJsStack {
  /** The kept lines, in their original order and spelling. */
  frames: string[];
  /** How many frames were dropped (runners, node:internal, mate-guard). */
  dropped: number;
}

const SEP = '[\\\\/]';
// A path separator either way; `*` stands for any one path segment.
const packagePattern = (name: string): string =>
  name
    .split('/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^\\\\/]*'))
    .join(SEP);
const PYTHON_MACHINERY = /[\\/](?:site|dist)-packages[\\/]|^<frozen |^<string>$/;
const segments = new Map<string, RegExp>();
/** `/node_modules/<one of packages>/`, or undefined for none. */
function packageSegment(packages: readonly string[]): RegExp | undefined {
  if (packages.length === 0) return undefined;
  const key = packages.join('\n');
  let re = segments.get(key);
  if (!re) {
    re = new RegExp(`${SEP}node_modules${SEP}(?:${packages.map(packagePattern).join('|')})${SEP}`);
    segments.set(key, re);
  }
  return re;
}

/**
 * Where a V8 stack line points: a path (file URLs converted), `node:...`,
 * or whatever V8 wrote (`<anonymous>`, `native`, `index 0`). Undefined for
 * a line that is not a frame.
 */
export function jsFrameLocation(line: string): string | undefined {
  const body = line.trim();
  if (!body.startsWith('at ')) return undefined;
  let loc = body
    .slice(3)
    .trim()
    .replace(/^async /, '');
  if (loc.endsWith(')')) {
    let depth = 0;
    for (let i = loc.length - 1; i >= 0; i--) {
      if (loc[i] === ')') depth++;
      else if (loc[i] === '(' && --depth === 0) {
        loc = loc.slice(i + 1, -1);
        break;
      }
    }
  }
  loc = loc.replace(/:\d+(?::\d+)?$/, '');
  if (loc.startsWith('file://')) {
    try {
      return fileURLToPath(loc);
    } catch {
      return loc;
    }
  }
  return loc;
}

/** A V8 stack line's parts: function, file (a path), line, column. Undefined for a line that is not a frame. */
export function parseJsFrame(
  line: string,
): { function?: string; file: string; line?: number; column?: number } | undefined {
  const file = jsFrameLocation(line);
  if (file === undefined) return undefined;
  const body = line.trim().slice(3).trim();
  const fn = /^(?:async )?(.*?) \(.*\)$/.exec(body)?.[1];
  const at = /:(\d+)(?::(\d+))?\)?$/.exec(body);
  return {
    ...(fn ? { function: fn } : {}),
    file,
    ...(at ? { line: Number(at[1]) } : {}),
    ...(at?.[2] ? { column: Number(at[2]) } : {}),
  };
}

function realDir(dir: string): string | undefined {
  try {
    return fs.realpathSync(dir) + path.sep;
  } catch {
    return undefined;
  }
}

const coreRoot = path.resolve(__dirname, '..', '..');
const packagesByCwd = new Map<string, string[]>();
const installedByCwd = new Map<string, OwnPackage[]>();

/** mate-guard's packages installed beside core and above `cwd`: one walk per cwd (the stack roots and the drop dirs both read it). */
function installed(cwd: string): OwnPackage[] {
  let found = installedByCwd.get(cwd);
  if (!found) {
    found = ownPackages([coreRoot, cwd]);
    installedByCwd.set(cwd, found);
  }
  return found;
}

/** The runner adapters' stack roots: of the runner packages installed here and above `cwd` (each package's `mateGuard.stackRoots`). */
function adapterStackRoots(cwd: string): string[] {
  return [...new Set(installed(cwd).flatMap((p) => p.stackRoots))];
}

/**
 * The packages whose frames are machinery, as the runner adapters installed
 * here and above `cwd` declare them, and mate-guard's own: recorded in every
 * event (machineryPackages), so a reader drops the frames the writer did.
 */
export function machineryPackages(cwd: string = process.cwd()): string[] {
  const known = packagesByCwd.get(cwd);
  if (known) return known;
  const list = [...new Set([...CORE_STACK_ROOTS, ...adapterStackRoots(cwd)])];
  packagesByCwd.set(cwd, list);
  return list;
}

const defaultDirsByCwd = new Map<string, string[]>();

/**
 * mate-guard's own package directories (found, not listed) and the
 * runners', resolved from `cwd`: each adapter stack root named without `*`,
 * for linked installs (outside any node_modules).
 */
export function defaultDropDirs(cwd: string = process.cwd()): string[] {
  const known = defaultDirsByCwd.get(cwd);
  if (known) return known;
  const dirs = new Set<string>();
  const own = realDir(coreRoot);
  if (own) dirs.add(own);
  for (const p of installed(cwd)) dirs.add(p.dir);
  for (const name of adapterStackRoots(cwd).filter((r) => !r.includes('*'))) {
    for (const from of [coreRoot, cwd]) {
      try {
        const dir = realDir(path.dirname(require.resolve(`${name}/package.json`, { paths: [from] })));
        if (dir) dirs.add(dir);
        break;
      } catch {
        // not installed there
      }
    }
  }
  const list = [...dirs];
  defaultDirsByCwd.set(cwd, list);
  return list;
}

/** True for a frame of node's own code, a runner, or mate-guard (`packages`: machineryPackages' names). */
export function isMachineryFrame(
  line: string,
  dropDirs: readonly string[],
  packages: readonly string[] = machineryPackages(),
): boolean {
  const loc = jsFrameLocation(line);
  if (loc === undefined) return false;
  if (loc.startsWith('node:')) return true;
  // V8's builtins (`new Promise (<anonymous>)`, `Array.map (native)`): the runner's plumbing between frames.
  if (loc === '<anonymous>' || loc === 'native') return true;
  if (packageSegment(packages)?.test(loc)) return true;
  // Python frames (the CUDA guard's stacks from PyTorch processes, written
  // V8-style): installed packages (torch, triton, pytest) and the interpreter's own.
  if (PYTHON_MACHINERY.test(loc)) return true;
  return dropDirs.some((dir) => loc.startsWith(dir));
}

/**
 * The user's frames of a V8 stack (text, or its lines; an `Error: ...`
 * first line and other non-frame lines are kept as they are). When no user
 * frame is left, nothing is dropped: the runner itself allocated, and its
 * frames are then the only clue.
 */
export function trimJsStack(stack: string | readonly string[], options: JsStackTrimOptions = {}): TrimmedJsStack {
  const lines = (typeof stack === 'string' ? stack.split('\n') : [...stack]).filter((l) => l.trim() !== '');
  const dropDirs = options.dropDirs ?? defaultDropDirs(options.cwd);
  const packages = options.packages ?? machineryPackages(options.cwd);
  const kept = lines.filter((l) => !isMachineryFrame(l, dropDirs, packages));
  const userFrames = kept.filter((l) => jsFrameLocation(l) !== undefined).length;
  if (userFrames === 0) return { frames: lines, dropped: 0 };
  return { frames: kept, dropped: lines.length - kept.length };
}

/** The line that stands for the dropped frames: `… 7 runner frames`, or '' for none. */
export function formatDroppedFrames(dropped: number): string {
  return dropped > 0 ? `… ${dropped} runner frame${dropped === 1 ? '' : 's'}` : '';
}
