#!/usr/bin/env node
// mate-vitest: a drop-in for `vitest` that also takes --guard-alloc, --guard-mode, ...
import { main } from '../dist/cli/mate-vitest.mjs';

await main();
