// Watch mode, driven without a TTY: the watcher runs a small generated
// suite, a file is changed to plant a bug, and the rerun must be guarded
// with the same configuration (workers that live on keep their allocator)
// and end with its own reports and summary. Bounded: every wait has a
// timeout and the watcher's whole process group is killed at the end.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import { ROOT, startWatch } from './helpers/run.mjs';

const ADDON = path.join(ROOT, 'examples', 'addon');
const SUMMARY = /^\[mate-guard\] summary: .*$/m;

function fixture(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-watch-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

/**
 * Writes `text` to `file` until the watcher has printed a summary matching
 * `re`: a watcher still settling on a loaded machine may miss the first
 * change, and one may rerun on the truncated file before the text is in
 * (a clean round) and again once it is.
 */
async function changeUntil(w, file, text, re) {
  for (let attempt = 0; attempt < 6; attempt++) {
    fs.writeFileSync(file, `${text}\n// change ${attempt}\n`);
    try {
      return await w.waitFor(re, 1, 15_000);
    } catch {
      // not seen yet: change it again
    }
  }
  return w.waitFor(re, 1, 1);
}

/** The summaries printed so far. */
const summaries = (output) => output.match(new RegExp(SUMMARY.source, 'gm')) ?? [];

const ONE_VIOLATION = /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, .*, 1 violation, /m;

async function watchTwoRounds(w, dir, bugFile, bugText, testName) {
  try {
    const first = await w.waitFor(SUMMARY, 1, 90_000);
    assert.match(summaries(first)[0], /, 0 violations,/, first);
    const out = await changeUntil(w, path.join(dir, bugFile), bugText, ONE_VIOLATION);
    const all = summaries(out);
    const round = all.findIndex((x) => ONE_VIOLATION.test(x));
    assert.ok(round >= 1, `a later round reports the bug:\n${out}`);
    // The round that found it: its output since the summary before it.
    const end = out.indexOf(all[round]);
    const rerun = out.slice(out.lastIndexOf(all[round - 1], end) + all[round - 1].length, end + all[round].length);
    assert.match(
      rerun,
      /==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
    );
    assert.ok(rerun.includes(`==mate-guard== test: ${testName}`), rerun);
    assert.doesNotMatch(out, /already active with a different configuration/);
  } finally {
    await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const BUG_JS = `const addon = require(${JSON.stringify(ADDON)});\n`;

test('vitest --watch (pool vmForks: workers live on between reruns): every rerun guarded, a summary per rerun', async () => {
  const plugin = pathToFileURL(path.join(ROOT, 'packages', 'vitest-plugin', 'dist', 'index.mjs')).href;
  const head = `import { createRequire } from 'node:module';\nimport { test } from 'vitest';\nconst addon = createRequire(import.meta.url)(${JSON.stringify(ADDON)});\n`;
  const dir = fixture({
    'vitest.config.mjs': `import guardAlloc from ${JSON.stringify(plugin)};\nexport default { plugins: [guardAlloc()], test: { include: ['*.test.mjs'], pool: 'vmForks' } };\n`,
    'a.test.mjs': `${head}test('sums', () => { addon.sum(Buffer.alloc(64, 1)); });\n`,
    'b.test.mjs': `${head}test('clean', () => { Buffer.alloc(16); });\n`,
  });
  const w = startWatch(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), '--watch', '--', '--guard-alloc'],
    { cwd: dir },
  );
  await watchTwoRounds(
    w,
    dir,
    'b.test.mjs',
    `${head}test('underflow', () => { addon.reverseFill(Buffer.alloc(64)); });`,
    'b.test.mjs > underflow',
  );
});

test('mate-jest --watchAll: the reporter owns the run inside Jest, a summary per rerun', async () => {
  const dir = fixture({
    'jest.config.js': `module.exports = { rootDir: __dirname, testEnvironment: ${JSON.stringify(path.join(ROOT, 'packages', 'jest-env'))}, testMatch: ['<rootDir>/*.test.js'], transform: {} };\n`,
    'a.test.js': `${BUG_JS}test('sums', () => { addon.sum(Buffer.alloc(64, 1)); });\n`,
    'b.test.js': `test('clean', () => { Buffer.alloc(16); });\n`,
  });
  const w = startWatch(
    process.execPath,
    [path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js'), '--guard-alloc', '--watchAll'],
    { cwd: dir },
  );
  await watchTwoRounds(
    w,
    dir,
    'b.test.js',
    `${BUG_JS}test('underflow', () => { addon.reverseFill(Buffer.alloc(64)); });`,
    'b.test.js > underflow',
  );
});

test('mocha --watch: the root hooks guard every rerun, a summary per rerun', async () => {
  const dir = fixture({
    'a.spec.cjs': `${BUG_JS}it('sums', () => { addon.sum(Buffer.alloc(64, 1)); });\n`,
    'b.spec.cjs': `it('clean', () => { Buffer.alloc(16); });\n`,
  });
  const args = [
    path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'),
    '--require',
    path.join(ROOT, 'packages', 'mocha-plugin'),
    '--guard-alloc',
    '--watch',
    '--watch-files',
    '*.cjs',
    '*.spec.cjs',
  ];
  const w = startWatch(process.execPath, args, { cwd: dir });
  await watchTwoRounds(
    w,
    dir,
    'b.spec.cjs',
    `${BUG_JS}it('underflow', () => { addon.reverseFill(Buffer.alloc(64)); });`,
    'b.spec.cjs > underflow',
  );
});

// Vitest's watch mode carries every failed file it did not rerun into the
// rerun's listing and its "Test Files" count (its reporters'
// failedUnwatchedFiles), whatever failed it: a file a guard fault killed is
// carried exactly like a file whose assertion failed, no more. Our own
// summary counts that rerun only, and a crashed file passes once it is
// fixed and rerun.
test('vitest --watch: a crashed file is carried into later reruns as Vitest carries any failed file; each rerun has its own summary', async () => {
  const plugin = pathToFileURL(path.join(ROOT, 'packages', 'vitest-plugin', 'dist', 'index.mjs')).href;
  const head = `import { createRequire } from 'node:module';\nimport { expect, test } from 'vitest';\nconst addon = createRequire(import.meta.url)(${JSON.stringify(ADDON)});\n`;
  const dir = fixture({
    'vitest.config.mjs': `import guardAlloc from ${JSON.stringify(plugin)};\nexport default { plugins: [guardAlloc()], test: { include: ['*.test.mjs'] } };\n`,
    'crash.test.mjs': `${head}test('overflows', () => { addon.fillInclusive(Buffer.alloc(64)); });\n`,
    'clean.test.mjs': `${head}test('clean', () => { Buffer.alloc(16); });\n`,
    'assert.test.mjs': `${head}test('fails', () => { expect(1).toBe(2); });\n`,
  });
  const ROUND_END = /^ (PASS|FAIL) .*(Waiting|Watching) for file changes/m;
  const w = startWatch(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), '--watch', '--', '--guard-alloc'],
    { cwd: dir },
  );
  /** Changes `file` until round `n` has ended (its summary and Vitest's watch line); that round's output. */
  const round = async (n, file, text) => {
    for (let attempt = 0; ; attempt++) {
      fs.writeFileSync(path.join(dir, file), `${text}// change ${attempt}\n`);
      try {
        await w.waitFor(SUMMARY, n, 15_000);
        break;
      } catch (err) {
        if (attempt >= 5) throw err;
      }
    }
    const out = await w.waitFor(ROUND_END, n, 15_000);
    return out.slice(out.lastIndexOf(' RERUN '));
  };
  try {
    const first = await w.waitFor(SUMMARY, 1, 90_000);
    assert.match(first, /, 1 violation, 1 process died, /);
    await w.waitFor(ROUND_END, 1, 15_000);
    const touched = await round(2, 'clean.test.mjs', `${head}test('clean', () => { Buffer.alloc(16); });\n`);
    // The crashed file is listed and counted as the assertion's file is: Vitest's carry, nothing of ours.
    assert.match(touched, /❯ crash\.test\.mjs \(1 test \| 1 failed\)/, touched);
    assert.match(touched, /❯ assert\.test\.mjs \(1 test \| 1 failed\)/, touched);
    assert.match(touched, /Test Files +2 failed \| 1 passed \(3\)/, touched);
    assert.doesNotMatch(touched, /==mate-guard==|killed by a guard fault/, touched);
    assert.match(
      touched,
      /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, .*, 0 violations, 0 tests skipped by tag$/m,
      touched,
    );
    const fixed = await round(
      3,
      'crash.test.mjs',
      `${head}test('overflows', () => { addon.sum(Buffer.alloc(64, 1)); });\n`,
    );
    assert.match(fixed, /✓ crash\.test\.mjs \(1 test\)/, fixed);
    assert.match(fixed, /Test Files +1 failed \| 1 passed \(2\)/, fixed); // the assertion's file, carried
    assert.match(fixed, /^\[mate-guard\] summary: .*, 0 violations, 0 tests skipped by tag$/m, fixed);
  } finally {
    await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
