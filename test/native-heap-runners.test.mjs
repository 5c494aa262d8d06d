// The native heap of the addon under each runner, turned on by flag, by
// environment variable and by config: a double free fails the test that did
// it, a malloc overflow faults and names its test, both with backend
// native-heap, the addon's frames and the test's line that called the addon.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { lineOf } from './helpers/native-frames.mjs';
import { BIN, ROOT, reportOf, run } from './helpers/run.mjs';

const GLOB = '*buggy_addon.node';
const FIX = path.join(ROOT, 'test', 'fixtures');

/** The first JS frame under "called from JS at:" names `spec` at the line that called `fn`. */
function assertCalledFrom(report, spec, fn) {
  const m = /^==mate-guard== called from JS at:\n==mate-guard== {3}at (?:.* \()?(\/[^\s()]+):(\d+):\d+\)?$/m.exec(
    report,
  );
  assert.ok(m, `the report shows the JS caller of the native function:\n${report}`);
  assert.equal(m[1], spec, report);
  assert.equal(Number(m[2]), lineOf(spec, `nativeHeap.${fn}()`), report);
}

/** What every runner must show: both bugs, each attributed to its test, in the addon's heap, with the test's JS line. */
function assertBothBugs(r, testPrefix, spec) {
  assert.notEqual(r.code, 0, r.output);
  const twice = reportOf(r.output, 'ERROR: double-free of 0x');
  assert.match(twice, /allocation #\d+ \(64 bytes, tail mode\) was already freed/);
  assert.ok(twice.includes(`==mate-guard== test: ${testPrefix} > native heap > frees a block twice`), twice);
  assert.match(twice, /backend native-heap/);
  assert.match(
    twice,
    /^==mate-guard== {3}#0(?:\.\d+)? DoubleFree \S*native_heap\.cc:\d+ \(buggy_addon\.node\+0x/m,
    'first freed at: the addon function and line',
  );
  const overflow = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
  assert.match(overflow, /1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/);
  assert.ok(overflow.includes(`==mate-guard== test: ${testPrefix} > native heap > overflows a malloc block`), overflow);
  assert.match(overflow, /backend native-heap/);
  const access = overflow.slice(
    overflow.indexOf('==mate-guard== access:'),
    overflow.indexOf('==mate-guard== allocation #'),
  );
  assert.match(
    access,
    /^==mate-guard== {3}#\d+ MallocOverflow \S*native_heap\.cc:\d+ \(buggy_addon\.node\+0x/m,
    'the access site',
  );
  assertCalledFrom(overflow, spec, 'mallocOverflow');
  assertCalledFrom(twice, spec, 'doubleFree');
}

describe('Vitest', () => {
  const cwd = path.join(FIX, 'vitest', 'native');
  const spec = path.join(cwd, 'native.test.mjs');
  const mateVitest = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
  test('mate-vitest --guard-native <glob>', async () => {
    assertBothBugs(
      await run(process.execPath, [mateVitest, 'run', '--guard-alloc', '--guard-native', GLOB], { cwd }),
      'native.test.mjs',
      spec,
    );
  });
  test('mate-vitest --pool threads --guard-native <glob> (each worker thread its own JS stacks)', async () => {
    assertBothBugs(
      await run(process.execPath, [mateVitest, 'run', '--pool', 'threads', '--guard-alloc', '--guard-native', GLOB], {
        cwd,
      }),
      'native.test.mjs',
      spec,
    );
  });
  test('MATE_VITEST_GUARD_NATIVE', async () => {
    const env = { MATE_VITEST_GUARD_ALLOC: '1', MATE_VITEST_GUARD_NATIVE: GLOB };
    assertBothBugs(
      await run(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd, env }),
      'native.test.mjs',
      spec,
    );
  });
  test('guardAlloc({ nativeModules })', async () => {
    const env = { FIXTURE_GUARD_OPTIONS: JSON.stringify({ enabled: true, nativeModules: [GLOB] }) };
    assertBothBugs(
      await run(process.execPath, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd, env }),
      'native.test.mjs',
      spec,
    );
  });
});

describe('Jest', () => {
  const mateJest = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
  const config = ['-c', path.join(FIX, 'jest', 'native', 'jest.config.js')];
  const prefix = 'test/fixtures/jest/native/native.test.js';
  const spec = path.join(ROOT, prefix);
  test('mate-jest --guard-native <glob>', async () => {
    assertBothBugs(
      await run(process.execPath, [mateJest, '--guard-alloc', '--guard-native', GLOB, ...config]),
      prefix,
      spec,
    );
  });
  test('MATE_JEST_GUARD_NATIVE', async () => {
    assertBothBugs(
      await run(process.execPath, [mateJest, ...config], {
        env: { MATE_JEST_GUARD_ALLOC: '1', MATE_JEST_GUARD_NATIVE: GLOB },
      }),
      prefix,
      spec,
    );
  });
  test('testEnvironmentOptions guardNative', async () => {
    const env = { FIXTURE_GUARD_OPTIONS: JSON.stringify({ guardAlloc: true, guardNative: [GLOB] }) };
    assertBothBugs(await run(process.execPath, [mateJest, ...config], { env }), prefix, spec);
  });
});

describe('Mocha', () => {
  const cwd = path.join(FIX, 'mocha');
  const mocha = path.join(BIN, 'mocha');
  const spec = path.join(cwd, 'native', 'native.spec.cjs');
  test('mocha --guard-native=<glob>', async () => {
    assertBothBugs(
      await run(
        mocha,
        ['--require', '@mate-guard/mocha', '--guard-alloc', `--guard-native=${GLOB}`, 'native/native.spec.cjs'],
        { cwd },
      ),
      'native/native.spec.cjs',
      spec,
    );
  });
  test('mocha 10 --expose-gc --guard-native=<glob> (mocha re-spawns itself, writing the value as a second word)', async () => {
    const mocha10 = path.join(ROOT, 'test', 'fixtures', 'mocha-10', 'node_modules', 'mocha', 'bin', 'mocha.js');
    assertBothBugs(
      await run(
        process.execPath,
        [
          mocha10,
          '--expose-gc',
          '--require',
          '@mate-guard/mocha',
          '--guard-alloc',
          `--guard-native=${GLOB}`,
          'native/native.spec.cjs',
        ],
        { cwd },
      ),
      'native/native.spec.cjs',
      spec,
    );
  });
  test('mocha --parallel --guard-native=<glob>', async () => {
    assertBothBugs(
      await run(
        mocha,
        [
          '--parallel',
          '--require',
          '@mate-guard/mocha',
          '--guard-alloc',
          `--guard-native=${GLOB}`,
          'native/native.spec.cjs',
        ],
        { cwd },
      ),
      'native/native.spec.cjs',
      spec,
    );
  });
  test('MATE_MOCHA_GUARD_NATIVE', async () => {
    const env = { MATE_MOCHA_GUARD_ALLOC: '1', MATE_MOCHA_GUARD_NATIVE: GLOB };
    assertBothBugs(
      await run(mocha, ['--require', '@mate-guard/mocha', 'native/native.spec.cjs'], { cwd, env }),
      'native/native.spec.cjs',
      spec,
    );
  });
  test('.mocharc guard-native', async () => {
    assertBothBugs(await run(mocha, [], { cwd: path.join(cwd, 'native-rc') }), '../native/native.spec.cjs', spec);
  });
});
