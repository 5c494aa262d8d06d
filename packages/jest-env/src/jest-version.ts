// The running Jest against the range this package supports (its
// peerDependencies, read from its own package.json): checked once per
// process where a run starts (mate-jest, the reporter in Jest's main
// process), before anything is guarded.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { checkRunnerVersion } from '@mate-guard/core/internal';

const OWN_PACKAGE = path.join(__dirname, '..', 'package.json');
const JEST_PACKAGES = new Set(['jest', 'jest-cli']);

/** The version of the nearest jest (or jest-cli) package above `file`. */
export function jestVersionAbove(file: string | undefined): string | undefined {
  if (!file) return undefined;
  let dir: string;
  try {
    dir = path.dirname(fs.realpathSync(file));
  } catch {
    return undefined;
  }
  for (; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (typeof pkg.name === 'string' && JEST_PACKAGES.has(pkg.name))
        return typeof pkg.version === 'string' ? pkg.version : undefined;
    } catch {
      // no package.json here: go up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

let checked = false;

/** Throws GuardConfigError for a Jest outside the range; nothing when its version cannot be read. */
export function checkJestVersion(version: string | undefined): void {
  if (checked) return;
  checked = true;
  const own = JSON.parse(fs.readFileSync(OWN_PACKAGE, 'utf8')) as { peerDependencies: { jest: string } };
  checkRunnerVersion({
    runner: 'jest',
    version,
    supported: own.peerDependencies.jest,
    plugin: '@mate-guard/jest-env',
    missing:
      "the environment and reporter follow Jest 29/30's circus events and reporter results, which other majors shape differently",
  });
}
