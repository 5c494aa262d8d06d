// Tools found on PATH, and the small native fixtures the tests compile with
// them: a shared object rebuilt only when a source is newer, written under a
// temporary name first so that test files running at once never load a
// half-written one.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ROOT } from './run.mjs';

export const NODE_API_HEADERS = path.join(ROOT, 'node_modules', 'node-api-headers', 'include');

/** An executable named `name` in a directory of `searchPath` (PATH's syntax), or undefined. */
export function findOnPath(name, searchPath = process.env.PATH ?? '') {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}

/** The C compiler on PATH (cc, gcc or clang), or undefined. */
export const cCompiler = () => findOnPath('cc') ?? findOnPath('gcc') ?? findOnPath('clang');

/** The C++ compiler on PATH (c++, g++ or clang++), or undefined. */
export const cxxCompiler = () => findOnPath('c++') ?? findOnPath('g++') ?? findOnPath('clang++');

/**
 * `out` built by `compiler` from `sources` as a shared object with the
 * Node-API headers (`flags` before the sources, `libs` after them), unless
 * it is newer than each of `sources` and `deps`. Returns `out`.
 */
export function buildSharedObject(compiler, out, sources, { flags = [], libs = [], deps = [] } = {}) {
  const built = fs.existsSync(out) ? fs.statSync(out).mtimeMs : -1;
  if ([...sources, ...deps].every((s) => fs.statSync(s).mtimeMs <= built)) return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  execFileSync(compiler, ['-shared', '-fPIC', ...flags, '-I', NODE_API_HEADERS, '-o', tmp, ...sources, ...libs]);
  fs.renameSync(tmp, out);
  return out;
}
