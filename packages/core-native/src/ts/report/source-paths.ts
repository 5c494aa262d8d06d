// Source paths as CI tools take them: relative to the repository, with
// forward slashes (a SARIF location under %SRCROOT%, a workflow
// annotation's file=). A run's reports may be read in another checkout (a
// CI artifact merged by a later job): a path under the root the run
// recorded is taken relative to that root first.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The repository `from` is in: the nearest directory up from it holding a
 * `.git` (a directory, or a file in a worktree or submodule), as `git
 * rev-parse --show-toplevel` finds it, without running git. `from` itself
 * when none.
 */
export function repoRoot(from: string): string {
  const start = path.resolve(from);
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return start;
  }
}

/** Where a run ran: its working directory (test paths are relative to it) and its repository. */
export interface RunPlace {
  cwd: string;
  root: string;
}

const inside = (root: string, file: string): string | undefined => {
  const rel = path.relative(root, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : undefined;
};

const slashes = (p: string) => p.split(path.sep).join('/');

export class SourcePaths {
  /** `here`: the repository of the reader (mate report's working directory). */
  constructor(readonly here: string) {}

  /**
   * `file` relative to the repository, or undefined when it lies outside
   * it. A relative `file` is taken from the run's working directory (a
   * test's file); absolute ones are tried under the run's root, then here.
   */
  relative(file: string, run?: RunPlace): string | undefined {
    const abs = path.resolve(run?.cwd ?? this.here, file);
    const rel = (run && inside(run.root, abs)) ?? inside(this.here, abs);
    return rel === undefined ? undefined : slashes(rel);
  }

  /**
   * A test's file (as the runner named it: relative to the run's working
   * directory) relative to the repository. A run that did not record where
   * it ran may have run elsewhere: its file must be here to be named.
   */
  testFile(file: string, run?: RunPlace): string | undefined {
    const rel = this.relative(file, run);
    return rel !== undefined && (run || fs.existsSync(path.join(this.here, rel))) ? rel : undefined;
  }
}
