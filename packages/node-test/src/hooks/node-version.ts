// The running Node against the range this package supports (its
// engines.node, read from its own package.json): node:test is Node's, so
// Node is the runner. Checked once, where the run starts.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { checkRunnerVersion } from '@mate-guard/core/internal';

const OWN_PACKAGE = path.join(__dirname, '..', '..', 'package.json');

/** Throws GuardConfigError for a Node outside the range. */
export function checkNodeVersion(version: string = process.version): void {
  const own = JSON.parse(fs.readFileSync(OWN_PACKAGE, 'utf8')) as { engines: { node: string } };
  checkRunnerVersion({
    runner: 'node',
    version: version.replace(/^v/, ''),
    supported: own.engines.node,
    plugin: '@mate-guard/node-test',
    missing: "the hook follows node:test's test classes and report stream as Node 20 and later shape them",
  });
}
