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
