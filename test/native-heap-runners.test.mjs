// The native heap of the addon under each runner, turned on by flag, by
// environment variable and by config: a double free fails the test that did
// it, a malloc overflow faults and names its test, both with backend
// native-heap and the addon's frames.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { BIN, ROOT, reportOf, run } from './helpers/run.mjs';

const GLOB = '*buggy_addon.node';
const FIX = path.join(ROOT, 'test', 'fixtures');


/** What every runner must show: both bugs, each attributed to its test, in the addon's heap. */
function assertBothBugs(r, testPrefix) {
  assert.notEqual(r.code, 0, r.output);
  const twice = reportOf(r.output, 'ERROR: double-free of 0x');
  assert.match(twice, /allocation #\d+ \(64 bytes, tail mode\) was already freed/);
  assert.ok(twice.includes(`==mate-guard== test: ${testPrefix} > native heap > frees a block twice`), twice);
  assert.match(twice, /backend native-heap/);
  assert.match(twice, /^==mate-guard== {3}#0(?:\.\d+)? DoubleFree \S*native_heap\.cc:\d+ \(buggy_addon\.node\+0x/m, 'first freed at: the addon function and line');
  const overflow = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
  assert.match(overflow, /1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/);
  assert.ok(overflow.includes(`==mate-guard== test: ${testPrefix} > native heap > overflows a malloc block`), overflow);
  assert.match(overflow, /backend native-heap/);
  const access = overflow.slice(overflow.indexOf('==mate-guard== access:'), overflow.indexOf('==mate-guard== allocation #'));
  assert.match(access, /^==mate-guard== {3}#\d+ MallocOverflow \S*native_heap\.cc:\d+ \(buggy_addon\.node\+0x/m, 'the access site');
}

describe('Vitest', () => {
  const cwd = path.join(FIX, 'vitest', 'native');
  const mateVitest = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
  test('mate-vitest --guard-native <glob>', async () => {
    assertBothBugs(await run(process.execPath, [mateVitest, 'run', '--guard-alloc', '--guard-native', GLOB], { cwd }), 'native.test.mjs');
  });
  test('MATE_VITEST_GUARD_NATIVE', async () => {
    const env = { MATE_VITEST_GUARD_ALLOC: '1', MATE_VITEST_GUARD_NATIVE: GLOB };
    assertBothBugs(await run(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd, env }), 'native.test.mjs');
  });
  test('guardAlloc({ nativeModules })', async () => {
    const env = { FIXTURE_GUARD_OPTIONS: JSON.stringify({ enabled: true, nativeModules: [GLOB] }) };
    assertBothBugs(await run(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd, env }), 'native.test.mjs');
  });
});

describe('Jest', () => {
  const mateJest = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
  const config = ['-c', path.join(FIX, 'jest', 'native', 'jest.config.js')];
  const prefix = 'test/fixtures/jest/native/native.test.js';
  test('mate-jest --guard-native <glob>', async () => {
    assertBothBugs(await run(process.execPath, [mateJest, '--guard-alloc', '--guard-native', GLOB, ...config]), prefix);
  });
  test('MATE_JEST_GUARD_NATIVE', async () => {
    assertBothBugs(await run(process.execPath, [mateJest, ...config], { env: { MATE_JEST_GUARD_ALLOC: '1', MATE_JEST_GUARD_NATIVE: GLOB } }), prefix);
  });
  test('testEnvironmentOptions guardNative', async () => {
    const env = { FIXTURE_GUARD_OPTIONS: JSON.stringify({ guardAlloc: true, guardNative: [GLOB] }) };
    assertBothBugs(await run(process.execPath, [mateJest, ...config], { env }), prefix);
  });
});

describe('Mocha', () => {
  const cwd = path.join(FIX, 'mocha');
  const mocha = path.join(BIN, 'mocha');
  test('mocha --guard-native=<glob>', async () => {
    assertBothBugs(await run(mocha, ['--require', '@mate-guard/mocha', '--guard-alloc', `--guard-native=${GLOB}`, 'native/native.spec.cjs'], { cwd }), 'native/native.spec.cjs');
  });
  test('MATE_MOCHA_GUARD_NATIVE', async () => {
    const env = { MATE_MOCHA_GUARD_ALLOC: '1', MATE_MOCHA_GUARD_NATIVE: GLOB };
    assertBothBugs(await run(mocha, ['--require', '@mate-guard/mocha', 'native/native.spec.cjs'], { cwd, env }), 'native/native.spec.cjs');
  });
  test('.mocharc guard-native', async () => {
    assertBothBugs(await run(mocha, [], { cwd: path.join(cwd, 'native-rc') }), '../native/native.spec.cjs');
  });
});
