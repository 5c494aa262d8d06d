// The runner's entry point for `mate replay`, found in this project: the
// record names the script the run started (a runner's bin, a mate-* CLI,
// at a path of the machine that ran it); the replay runs the same
// program as installed here (node_modules from the replay's directory up,
// or next to this mate for a mate-* CLI), never the recorded file.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { RunnerAdapter, RunnerProgram } from './runner-adapter';

/** The program `script` (as recorded) is, by its file name: `mocha`, `.bin/mocha`, `mocha/bin/mocha.js`, `mate-mocha.js`. */
function programOf(programs: readonly RunnerProgram[], script: string): RunnerProgram | undefined {
  const name = path.basename(script).replace(/\.(c|m)?js$/, '');
  return programs.find((p) => p.bin === name || p.also?.test(script));
}

/**
 * `pkg`'s directory as node finds it from `from`: node_modules of `from`
 * and each directory above, up to `stop` (the checkout: a node_modules
 * above it is not the project's) or the root.
 */
export function packageDir(pkg: string, from: string, stop?: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', pkg);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir || (stop !== undefined && dir === path.resolve(stop))) return undefined;
  }
}

/** The file of `program`'s bin in the package installed at `dir`. */
function binFile(dir: string, program: RunnerProgram): string | undefined {
  try {
    const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const rel = typeof bin === 'string' ? bin : bin?.[program.bin];
    const file = rel ? path.join(dir, rel) : undefined;
    return file && fs.existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where this mate is installed: the project or npx folder whose
 * node_modules holds it (this repository's root when run from its source).
 * Packages found next to this mate are looked for there, never above.
 */
export function ownInstall(): string {
  const parts = __dirname.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  return at > 0 ? parts.slice(0, at).join(path.sep) || path.sep : path.resolve(__dirname, '..', '..', '..', '..');
}

export type LocalEntry =
  | { script: string }
  /** `script` is no entry point replay knows for the runner. */
  | { unknown: string }
  /** The program is not installed here. */
  | { missing: string };

/** The local entry point of the program the record's `script` started (one of the runner adapter's programs), resolved from `cwd` up to the checkout `root`. */
export function localEntry(adapter: RunnerAdapter, script: string, cwd: string, root: string): LocalEntry {
  const program = programOf(adapter.programs, script);
  if (!program)
    return { unknown: `${adapter.runner}'s entry point is ${adapter.programs.map((p) => p.bin).join(' or ')}` };
  // A mate-* CLI may come with this mate rather than the project (npx): this mate's own install, never a folder above the checkout.
  const from: [string, string][] = program.pkg.startsWith('@mate-guard/')
    ? [
        [cwd, root],
        [__dirname, ownInstall()],
      ]
    : [[cwd, root]];
  for (const [f, stop] of from) {
    const dir = packageDir(program.pkg, f, stop);
    const file = dir && binFile(dir, program);
    if (file) return { script: file };
  }
  return { missing: `${program.pkg} (${program.bin}) is not installed in ${cwd} (npm install)` };
}
