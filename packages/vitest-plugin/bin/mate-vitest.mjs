#!/usr/bin/env node
// mate-vitest: a drop-in for `vitest` that also takes --guard-alloc, --guard-mode, ...
import core from '@mate-guard/core/internal';

import { main } from '../dist/cli/mate-vitest.mjs';

// Vitest sets the exit code itself as its run ends; runCli turns a bad
// setting found before it starts into its one line and status 2.
core.runCli('mate-vitest', async (argv) => {
  await main(argv);
  return process.exitCode;
});
