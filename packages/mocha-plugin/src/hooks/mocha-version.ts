// The running Mocha against the range this package supports (its
// peerDependencies, read from its own package.json): checked once, in the
// process that starts the run, before anything is guarded.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { checkRunnerVersion } from '@mate-guard/core/internal';

import { runningMochaRoot } from './running-mocha';

const OWN_PACKAGE = path.join(__dirname, '..', '..', 'package.json');

function versionAt(root: string | undefined): string | undefined {
  if (!root) return undefined;
  try {
    const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: unknown })
      .version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** What a guarded run on this Mocha would lack (root-hook plugins came with Mocha 8). */
function missing(version: string): string {
  const major = Number(/^\d+/.exec(version)?.[0] ?? 0);
  return major < 8
    ? 'it loads no root-hook plugin (mochaHooks, Mocha 8), so no test would be bracketed: reports would name no test and damage found after a test would fail none'
    : 'mate-guard is built and tested against the supported range only';
}

function check(version: string | undefined): void {
  const own = JSON.parse(fs.readFileSync(OWN_PACKAGE, 'utf8')) as { peerDependencies: { mocha: string } };
  checkRunnerVersion({
    runner: 'mocha',
    version,
    supported: own.peerDependencies.mocha,
    plugin: '@mate-guard/mocha',
    missing: version ? missing(version) : '',
  });
}

/** The running Mocha: throws GuardConfigError outside the range; nothing when its version cannot be read. */
export function checkMochaVersion(): void {
  check(versionAt(runningMochaRoot()));
}

/** mate-mocha, before it looks for Mocha's executable (Mocha 5 has no bin/mocha.js): the project's Mocha. */
export function checkProjectMocha(cwd: string = process.cwd()): void {
  let root: string | undefined;
  try {
    root = path.dirname(require.resolve('mocha/package.json', { paths: [cwd] }));
  } catch {
    return; // none installed here: mate-mocha says so itself
  }
  check(versionAt(root));
}
