// The running Vitest against the range this package supports (its
// peerDependencies, read from its own package.json): checked once per
// process, when guarding is on, before anything is guarded.
import { createRequire } from 'node:module';

import { checkRunnerVersion } from '@mate-guard/core/internal';
import { version } from 'vitest/node';

let checked = false;

/** Throws GuardConfigError for a Vitest outside the range. */
export function checkVitestVersion(): void {
  if (checked) return;
  checked = true;
  const own = createRequire(import.meta.url)('../../package.json') as { peerDependencies: { vitest: string } };
  checkRunnerVersion({
    runner: 'vitest',
    version,
    supported: own.peerDependencies.vitest,
    plugin: '@mate-guard/vitest',
    missing: "the plugin uses Vitest 4.1's test tags and reporter API, which older versions lack or shape differently",
  });
}
