// The runner's entry point for `mate replay`, found in this project: the
// record names the script the run started (a runner's bin, a mate-* CLI,
// at a path of the machine that ran it); the replay runs the same
// program as installed here (node_modules from the replay's directory up,
// or next to this mate for a mate-* CLI), never the recorded file.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { RunnerName } from '../settings/table';

interface Program {
  /** The package that installs it. */
  pkg: string;
  /** Its bin name in that package. */
  bin: string;
  /** Other scripts of the package a run can start in (mocha's bin forks lib/cli/cli.js for node flags). */
  also?: RegExp;
}

/** What each replayable runner's record may name as its script. */
const PROGRAMS: Record<RunnerName, readonly Program[]> = {
  vitest: [{ pkg: '@mate-guard/vitest', bin: 'mate-vitest' }, { pkg: 'vitest', bin: 'vitest' }],
  jest: [{ pkg: '@mate-guard/jest-env', bin: 'mate-jest' }, { pkg: 'jest', bin: 'jest' }],
  mocha: [{ pkg: '@mate-guard/mocha', bin: 'mate-mocha' }, { pkg: 'mocha', bin: 'mocha', also: /(^|[\\/])(_mocha|mocha[\\/]lib[\\/]cli[\\/]cli\.js)$/ }],
  'node-test': [{ pkg: '@mate-guard/node-test', bin: 'mate-node-test' }],
};

/** The runners replay knows the entry points of. */
export const isRunner = (runner: string): runner is RunnerName => Object.hasOwn(PROGRAMS, runner);
export const REPLAY_RUNNERS = Object.keys(PROGRAMS) as RunnerName[];

/** The runner's own package (its mate-* CLI, its test selection). */
export const runnerPackage = (runner: RunnerName): string => PROGRAMS[runner][0].pkg;

/** The program `script` (as recorded) is, by its file name: `mocha`, `.bin/mocha`, `mocha/bin/mocha.js`, `mate-mocha.js`. */
function programOf(runner: RunnerName, script: string): Program | undefined {
  const name = path.basename(script).replace(/\.(c|m)?js$/, '');
  return PROGRAMS[runner]?.find((p) => p.bin === name || p.also?.test(script));
}

/** `pkg`'s directory as node finds it from `from`: node_modules of `from` and each directory above. */
export function packageDir(pkg: string, from: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', pkg);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The file of `program`'s bin in the package installed at `dir`. */
function binFile(dir: string, program: Program): string | undefined {
  try {
    const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
    const rel = typeof bin === 'string' ? bin : bin?.[program.bin];
    const file = rel ? path.join(dir, rel) : undefined;
    return file && fs.existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

export type LocalEntry =
  | { script: string }
  /** `script` is no entry point replay knows for the runner. */
  | { unknown: string }
  /** The program is not installed here. */
  | { missing: string };

/** The local entry point of the program the record's `script` started, resolved from `cwd`. */
export function localEntry(runner: RunnerName, script: string, cwd: string): LocalEntry {
  const program = programOf(runner, script);
  if (!program) return { unknown: `${runner}'s entry point is ${(PROGRAMS[runner] ?? []).map((p) => p.bin).join(' or ')}` };
  // A mate-* CLI may come with this mate rather than the project (npx).
  const from = program.pkg.startsWith('@mate-guard/') ? [cwd, __dirname] : [cwd];
  for (const f of from) {
    const dir = packageDir(program.pkg, f);
    const file = dir && binFile(dir, program);
    if (file) return { script: file };
  }
  return { missing: `${program.pkg} (${program.bin}) is not installed in ${cwd} (npm install)` };
}
