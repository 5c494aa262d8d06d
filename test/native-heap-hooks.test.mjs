// Modules that install their own allocator in variables first set to
// libc's functions (libxml2's xmlFree = free and xmlMemSetup, SQLite's
// sqlite3_config(SQLITE_CONFIG_MALLOC), zlib's zalloc/zfree): the native
// heap guard leaves a variable alone once the program set it, in a
// constructor, in the module init, or later; such programs run clean under
// every runner, and the planted bugs are still caught.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import {
  buildHookAddons,
  buildLibxml2Addon,
  buildLibxmljs2,
  HOOK_GLOB,
  hookAddonsMissing,
  libxml2Missing,
} from './helpers/hook-addons.mjs';
import { BIN, guardRun, reportLines, ROOT, run } from './helpers/run.mjs';

const skip = hookAddonsMissing() || false;
const FIX = path.join(ROOT, 'test', 'fixtures');
const DRIVER = path.join(FIX, 'native-heap', 'hooks.js');
let dir = '';
before(() => {
  if (!skip) dir = buildHookAddons();
});

const hooks = (what, flags = []) => guardRun(['--native', HOOK_GLOB, ...flags], [DRIVER, dir, what]);
const lastJson = (output) =>
  JSON.parse(
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop(),
  );
const guardedCount = (output) =>
  Number(/\[mate-guard\] native heap: (\d+) of \d+ allocations? of the chosen modules guarded/.exec(output)?.[1] ?? 0);

test('hooks set in a constructor, in the module init and from JS run as a plain run does, with no report', {
  skip,
}, async () => {
  const plain = await run(process.execPath, [DRIVER, dir, 'clean']);
  assert.equal(plain.code, 0, plain.output);
  const r = await hooks('clean');
  assert.equal(r.code, 0, r.output);
  assert.deepEqual(lastJson(r.stdout), lastJson(plain.stdout));
  assert.deepEqual(lastJson(r.stdout), { ctor: true, init: true, callBefore: false, callAfter: true, routed: true });
  assert.doesNotMatch(r.output, /==mate-guard==|warning/);
  assert.ok(
    guardedCount(r.output) > 20,
    `the modules' memory was guarded underneath their own allocators:\n${r.output}`,
  );
});

test('--log-allocations says which variables were redirected and which the program owns', { skip }, async () => {
  const r = await hooks('clean', ['--log-allocations']);
  assert.equal(r.code, 0, r.output);
  const line = (module, variable, rest) =>
    new RegExp(
      `^\\[mate-guard\\] native heap: \\S*/${module}\\.node: variable ${variable} \\(${module}\\.node\\+0x[0-9a-f]+\\)${rest}$`,
      'm',
    );
  // Set in a constructor: the program's before mate-guard saw the module.
  assert.match(
    r.stderr,
    line(
      'hook_ctor',
      'xmlFree',
      ', initialised to free, left alone: the program set it to hook_ctor\\.node\\+0x[0-9a-f]+ \\(its own allocator\\) before mate-guard saw it',
    ),
  );
  // Set in the module init: libc's at install (redirected), the program's from the next look on.
  assert.match(
    r.stderr,
    line(
      'hook_init',
      'xmlMalloc',
      " still held libc's malloc: redirected \\(it is left alone once the program sets it\\)",
    ),
  );
  assert.match(
    r.stderr,
    line(
      'hook_init',
      'xmlMalloc',
      ', initialised to malloc, left alone from now on: the program set it to hook_init\\.node\\+0x[0-9a-f]+ \\(its own allocator\\)',
    ),
  );
  assert.match(
    r.stderr,
    line(
      'hook_call',
      'xmlMemStrdup',
      ', initialised to strdup, left alone from now on: the program set it to hook_call\\.node\\+0x[0-9a-f]+ \\(its own allocator\\)',
    ),
  );
  // An unchosen module's free variable goes to the free router while it holds libc's free.
  assert.match(
    r.stderr,
    /^\[mate-guard\] native heap \(frees\): \S*\/unchosen_vars\.node: variable xmlFree \(unchosen_vars\.node\+0x[0-9a-f]+\) still held libc's free: redirected/m,
  );
  // Each variable once per change, not again at every later module load.
  assert.equal(r.stderr.split('\n').filter((l) => /hook_ctor\.node: variable xmlFree /.test(l)).length, 1, r.stderr);
});

test("one byte past a block of the program's own allocator still faults at the write", { skip }, async () => {
  const r = await hooks('overflow');
  assert.equal(r.code, 139, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(80 bytes, tail mode\)$/,
  );
  assert.match(
    lines.join('\n'),
    /allocated at:\n==mate-guard== {3}#0 HdrMalloc \S*hook-vars\.c:\d+ \(hook_ctor\.node\+0x/,
  );
});

test('a planted double free of the module with hooks is still reported', { skip }, async () => {
  const r = await hooks('doubleFree');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /doubleFree: returned/);
  assert.match(
    reportLines(r.output)[0],
    /^==mate-guard== ERROR: double-free of 0x[0-9a-f]+: allocation #\d+ \(64 bytes, tail mode\) was already freed$/,
  );
});

test('the real libxml2 with libxmljs2-style xmlMemSetup wrappers, both modules guarded, runs as a plain run does', {
  skip: libxml2Missing() || false,
}, async () => {
  const addon = buildLibxml2Addon();
  const script = path.join(FIX, 'native-heap', 'libxml2.js');
  const plain = await run(process.execPath, [script, addon]);
  assert.equal(plain.code, 0, plain.output);
  const r = await guardRun(['--native', '*xml_hooks.node', '--native', '*libxml2.so*'], [script, addon]);
  assert.equal(r.code, 0, r.output);
  assert.equal(r.stdout, plain.stdout);
  assert.match(r.stdout, /<seen>n49<\/seen>/);
  assert.doesNotMatch(r.output, /==mate-guard==|warning|invalid/);
  assert.ok(guardedCount(r.output) > 1000, r.output);
});

test('libxmljs2 from the registry (libxml2 inside, its allocator set through xmlMemSetup), its whole heap guarded, runs as a plain run does', {
  timeout: 900_000,
}, async (t) => {
  const { dir, why } = buildLibxmljs2();
  if (why) {
    t.skip(why);
    return;
  }
  const script = path.join(FIX, 'native-heap', 'libxmljs2.js');
  const plain = await run(process.execPath, ['--expose-gc', script, dir]);
  assert.equal(plain.code, 0, plain.output);
  const r = await guardRun(['--native', '*xmljs.node'], ['--expose-gc', script, dir]);
  assert.equal(r.code, 0, r.output);
  assert.equal(r.stdout, plain.stdout);
  assert.match(r.stdout, /^total \d+$/m);
  assert.doesNotMatch(r.output, /==mate-guard==|warning|invalid/);
  assert.ok(guardedCount(r.output) > 100_000, r.output);
  // libxml2's hook variables hold libxmljs2's wrappers: left to the program, their mallocs guarded underneath.
  const log = await guardRun(['--native', '*xmljs.node', '--log-allocations'], [script, dir, '5']);
  assert.equal(log.code, 0, log.output);
  for (const [variable, wrapper] of [
    ['xmlFree', 'xmlMemFreeWrap'],
    ['xmlMalloc', 'xmlMemMallocWrap'],
    ['xmlRealloc', 'xmlMemReallocWrap'],
  ]) {
    assert.match(
      log.stderr,
      new RegExp(
        `^\\[mate-guard\\] native heap: \\S*/xmljs\\.node: variable ${variable} \\(xmljs\\.node\\+0x[0-9a-f]+\\), initialised to \\w+, left alone: the program set it to \\S*${wrapper}\\S* \\(xmljs\\.node\\+0x[0-9a-f]+\\) \\(its own allocator\\)`,
        'm',
      ),
    );
  }
});

/** What every runner must show: the suite passes, nothing reported, the modules' memory guarded. */
function assertClean(r, passed) {
  assert.equal(r.code, 0, r.output);
  assert.doesNotMatch(r.output, /==mate-guard==|invalid-free|warning/);
  assert.match(r.output, passed);
  assert.ok(guardedCount(r.output) > 10, r.output);
}

describe('every runner', { skip }, () => {
  test('node --test --require @mate-guard/node-test', async () => {
    const r = await run(
      process.execPath,
      ['--test', '--require', '@mate-guard/node-test', '--test-reporter=spec', 'hooks/hooks.test.cjs'],
      {
        cwd: path.join(FIX, 'node-test'),
        env: { MATE_NODE_TEST_GUARD_ALLOC: '1', MATE_NODE_TEST_GUARD_NATIVE: HOOK_GLOB },
      },
    );
    assertClean(r, /ℹ pass 4\n/);
  });
  test('mocha --guard-native', async () => {
    const r = await run(
      path.join(BIN, 'mocha'),
      ['--require', '@mate-guard/mocha', '--guard-alloc', `--guard-native=${HOOK_GLOB}`, 'hooks/hooks.spec.cjs'],
      { cwd: path.join(FIX, 'mocha') },
    );
    assertClean(r, /4 passing/);
  });
  test('mate-jest --guard-native', async () => {
    const r = await run(process.execPath, [
      path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js'),
      '--guard-alloc',
      '--guard-native',
      HOOK_GLOB,
      '-c',
      path.join(FIX, 'jest', 'hooks', 'jest.config.js'),
    ]);
    assertClean(r, /Tests: +4 passed, 4 total/);
  });
  test('mate-vitest --guard-native', async () => {
    const r = await run(
      process.execPath,
      [
        path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs'),
        'run',
        '--guard-alloc',
        '--guard-native',
        HOOK_GLOB,
      ],
      { cwd: path.join(FIX, 'vitest', 'hooks') },
    );
    assertClean(r, /Tests +4 passed \(4\)/);
  });
});
