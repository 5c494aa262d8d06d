// mate-vitest --watch over Vitest projects that each load the plugin with a
// mode of their own: every round, the first and each rerun after a change,
// guards each project in its own mode (head faults, tail finds the damaged
// canary), never the settings of whichever project started the watcher.
// Driven without a TTY, as test/watch.test.mjs drives watch runs: every
// wait is bounded and the watcher's process group is killed at the end.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import { ROOT, startWatch } from './helpers/run.mjs';

const ADDON = path.join(ROOT, 'examples', 'addon');
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const SUMMARY = /^\[mate-guard\] summary: .*$/gm;
const HEAD = `import { createRequire } from 'node:module';\nimport { test } from 'vitest';\nconst addon = createRequire(import.meta.url)(${JSON.stringify(ADDON)});\n`;
const BUG = `${HEAD}test('underflow', () => { addon.reverseFill(Buffer.alloc(64)); });\n`;

/**
 * The suite's folder: inside the checkout, where mate-vitest finds Vitest
 * from its working directory (the checkout's node_modules), under the
 * git-ignored .mate-guard/, not under node_modules (Vite's watcher ignores those).
 */
function fixture() {
  const parent = path.join(ROOT, '.mate-guard');
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, 'watch-projects-'));
  const plugin = pathToFileURL(path.join(ROOT, 'packages', 'vitest-plugin', 'dist', 'index.mjs')).href;
  fs.writeFileSync(
    path.join(dir, 'vitest.config.mjs'),
    `import guardAlloc from ${JSON.stringify(plugin)};
export default { test: { projects: [
  { plugins: [guardAlloc({ mode: 'head' })], test: { name: 'head', include: ['*.test.mjs'] } },
  { plugins: [guardAlloc({ mode: 'tail' })], test: { name: 'tail', include: ['*.test.mjs'] } },
] } };
`,
  );
  fs.writeFileSync(path.join(dir, 'a.test.mjs'), `${HEAD}test('clean', () => { Buffer.alloc(16); });\n`);
  return dir;
}

/** The output of the last round so far: from the summary before it to its own. */
function lastRound(output) {
  const ends = [...output.matchAll(SUMMARY)].map((m) => m.index + m[0].length);
  return output.slice(ends.length > 1 ? ends[ends.length - 2] : 0, ends[ends.length - 1]);
}

test('mate-vitest --watch with per-project plugin options: every rerun guards each project in its own mode', async () => {
  const dir = fixture();
  const w = startWatch(process.execPath, [MATE_VITEST, '--watch', '--guard-alloc', '--no-guard-rerun'], { cwd: dir });
  try {
    const first = await w.waitFor(SUMMARY, 1, 90_000);
    assert.match(lastRound(first), /^\[mate-guard\] guarding on: mode head \(project head\), tail \(project tail\)$/m);
    assert.match(lastRound(first), /, 0 violations,/);
    // Two reruns, each after a change (rewritten until the watcher takes it: one settling on a loaded machine may miss the first).
    for (const n of [1, 2]) {
      let out = '';
      for (let attempt = 0; attempt < 6 && !out; attempt++) {
        fs.writeFileSync(path.join(dir, 'a.test.mjs'), `${BUG}// change ${n}.${attempt}\n`);
        out = await w.waitFor(/^\[mate-guard\] summary: .*, 2 violations, /m, n, 15_000).catch(() => '');
      }
      assert.ok(out, `rerun ${n} reported both projects' damage:\n${w.output}`);
      // Waited for as it arrived: the round that reported it is the last one.
      const rerun = lastRound(out);
      assert.match(rerun, /^\[mate-guard\] guarding on: mode head \(project head\), tail \(project tail\)$/m);
      assert.match(
        rerun,
        /ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
      );
      assert.match(
        rerun,
        /ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged\n==mate-guard== test: \[tail\] a\.test\.mjs > underflow/,
      );
      assert.doesNotMatch(
        rerun,
        /\(64 bytes, tail mode\)\n==mate-guard== test: \[head\]|\(64 bytes, head mode\)[^\n]*\n==mate-guard== test: \[tail\]/,
      );
    }
    assert.doesNotMatch(w.output, /already active with a different configuration/);
  } finally {
    await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
