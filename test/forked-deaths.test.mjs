// A death outside guarded memory is the program's, not a guard violation:
// a test forks a child that locks a page (mprotect PROT_NONE) and touches
// it, and asserts the child died by SIGSEGV (a crypto library's own suite
// does this). Plain: exit 0. Guarded, under guard-run and every runner:
// exit 0, the child's death reported with its test and named in the
// summary, counted as no violation, no test failed for it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { buildSharedObject, cCompiler } from './helpers/compile.mjs';
import { BIN, ROOT, guardRun, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'forked-deaths');
const SPEC = path.join(FIX, 'forked.test.cjs');
const DEATH =
  /^==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0x[0-9a-f]+ \(no permission for the access\), outside guarded memory: the process dies$/m;
const NOTED =
  /^\[mate-guard\] 1 death that names no guarded allocation \(reported above\): not counted as a violation; the program's own exit status tells whether it failed the run$/m;
const NO_VIOLATION = /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, .*, 0 violations, /m;

const skip = cCompiler() ? false : 'no C compiler on PATH';

/** fork_touch.node in the fixture's build/ (ignored by git). */
const addon = () =>
  buildSharedObject(cCompiler(), path.join(FIX, 'build', 'fork_touch.node'), [path.join(FIX, 'fork_touch.c')], {
    flags: ['-O2', '-g'],
  });

const env = () => ({ FORK_TOUCH_ADDON: addon() });

function assertNotedNotCounted(r, testName) {
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, DEATH);
  if (testName) assert.ok(r.output.includes(`==mate-guard== test: ${testName}\n`), r.output);
  assert.match(r.output, NOTED);
  assert.match(r.output, NO_VIOLATION);
  assert.doesNotMatch(
    r.output,
    /died of SIGSEGV: deadly-signal while running/,
    'no runner worker died: no crash is put on a test',
  );
}

describe('a test that forks a child to watch it die on a locked page', { skip }, () => {
  test('plain: the test passes and the run exits 0', async () => {
    const r = await run(process.execPath, ['--test', '--test-reporter=spec', SPEC], { env: env() });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /✔ a child touching a locked page dies by SIGSEGV/);
  });

  test('mate guard-run: exit 0, the death reported and noted in the summary, no violation', async () => {
    const script = `require(${JSON.stringify(path.join(FIX, 'addon.cjs'))}); const a = require(${JSON.stringify(path.join(FIX, 'addon.cjs'))});
      Buffer.alloc(64).fill(1); const s = a.forkAndTouchLockedPage(); if (s !== 11) { console.error('child died of', s); process.exit(3); }`;
    const r = await guardRun([], ['-e', script], { env: env() });
    assertNotedNotCounted(r);
  });

  test('node:test (mate-node-test): the test passes, exit 0, the death named with its test', async () => {
    const r = await run(
      path.join(BIN, 'mate-node-test'),
      ['--guard-alloc', '--test-reporter=spec', 'forked.test.cjs'],
      { cwd: FIX, env: env() },
    );
    assertNotedNotCounted(r, 'forked.test.cjs > locked pages > a child touching a locked page dies by SIGSEGV');
    assert.match(r.output, /✔ a child touching a locked page dies by SIGSEGV/);
  });

  test('Mocha (mate-mocha): the test passes, exit 0', async () => {
    const r = await run(path.join(BIN, 'mate-mocha'), ['--guard-alloc', 'forked.test.cjs'], { cwd: FIX, env: env() });
    assertNotedNotCounted(r, 'forked.test.cjs > locked pages > a child touching a locked page dies by SIGSEGV');
    assert.match(r.output, /1 passing/);
  });

  test('Jest (mate-jest): the test passes, exit 0', async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-jest-cache-'));
    const r = await run(
      path.join(BIN, 'mate-jest'),
      ['--guard-alloc', '--cacheDirectory', cache, '-c', path.join(FIX, 'jest.config.js')],
      { env: env() },
    );
    fs.rmSync(cache, { recursive: true, force: true });
    assertNotedNotCounted(
      r,
      'test/fixtures/forked-deaths/forked.test.cjs > locked pages > a child touching a locked page dies by SIGSEGV',
    );
    assert.match(r.output, /Tests: +1 passed/);
  });

  test('Vitest (mate-vitest, forks): the test passes, exit 0', async () => {
    const r = await run(path.join(BIN, 'mate-vitest'), ['run', '--pool', 'forks', '--guard-alloc'], {
      cwd: FIX,
      env: env(),
    });
    assertNotedNotCounted(r, 'forked.test.mjs > locked pages > a child touching a locked page dies by SIGSEGV');
    assert.match(r.output, /Tests +1 passed/);
  });
});
