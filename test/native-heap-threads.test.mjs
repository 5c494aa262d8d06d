// The at-once close across threads: a native free closes its slot on every
// CPU before it returns, so a stale use from another thread right after it
// (a thread whose CPU had the page's translation cached) faults and is
// reported as a use after free, with where the block was allocated and freed.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildCrossThreadAddon, hookAddonsMissing } from './helpers/hook-addons.mjs';
import { guardRun, reportLines } from './helpers/run.mjs';

const SIGSEGV_EXIT = 139;
const skip = hookAddonsMissing() || false;

// Each way of closing a freed kept slot (keptClose): the default (auto),
// and each forced through its environment variable.
for (const close of [undefined, 'mprotect', 'markers'])
  for (const [fn, when] of [
    ['staleUseFromOtherThread', 'right after the free'],
    ['staleUseAfterThreadedChurn', 'right after the free, after two threads allocated at once'],
  ])
    test(`a stale write from a second thread ${when} faults and is reported as a use after free${close ? ` (kept slots closed by ${close})` : ''}`, {
      skip,
    }, async () => {
      const addon = buildCrossThreadAddon();
      const script = `require(${JSON.stringify(addon)}).${fn}(); console.log('${fn}: returned')`;
      const env = close ? { MATE_GUARD_KEPT_CLOSE: close } : {};
      const r = await guardRun(['--native', '*cross_thread.node'], ['-e', script], { env });
      assert.equal(r.code, SIGSEGV_EXIT, r.output);
      assert.doesNotMatch(r.output, /returned/);
      const lines = reportLines(r.output);
      assert.match(
        lines[0],
        /^==mate-guard== ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 1 inside freed allocation #\d+ \(64 bytes, tail mode\)$/,
      );
      const text = lines.join('\n');
      assert.match(
        text,
        /allocated at:\n==mate-guard== {3}#0(?:\.\d+)? StaleUseFromOtherThread \S*cross-thread\.c:\d+/,
      );
      assert.match(text, /freed at:\n==mate-guard== {3}#0(?:\.\d+)? StaleUseFromOtherThread \S*cross-thread\.c:\d+/);
    });
