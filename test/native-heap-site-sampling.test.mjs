// Site-aware sampling (nativeSiteFirst): with the native heap sampled at
// one in a million, every call site of the example addon is still guarded
// on its first calls, so each planted bug (each happens on the first call
// of its site) is caught; plain sampling (nativeSiteFirst 0) lets the same
// bug through. The summary says how many sites were seen and that each was
// covered. Real CLI and runners, real addon.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { guardRun, MATE, ROOT, run } from './helpers/run.mjs';

const SIGSEGV_EXIT = 139;
const RARE = ['--native', '*buggy_addon.node', '--native-sample-rate', '1000000'];
const script = path.join(ROOT, 'examples', 'scripts', 'native-heap.js');
const SITES_LINE =
  /^\[mate-guard\] native heap: (\d+) call sites?, all (?:guarded at least (\d+) times?|covered: (\d+) guarded at least (\d+) times?, (\d+) on every call \(called fewer times\))$/m;

describe('every planted native bug of the examples is caught at a sample rate of 1 in 1,000,000', () => {
  for (const [bug, flags, exit, error] of [
    [
      'mallocOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'callocOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'reallocOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'newArrayOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'vectorOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'mallocUnderflow',
      ['--mode', 'head'],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
    ],
    [
      'mallocUnderflow',
      [],
      1,
      /ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
    ],
    [
      'useAfterFree',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(64 bytes, tail mode\)/,
    ],
    [
      'doubleFree',
      [],
      1,
      /ERROR: double-free of 0x[0-9a-f]+: allocation #\d+ \(64 bytes, tail mode\) was already freed/,
    ],
    [
      'invalidFree',
      [],
      1,
      /ERROR: invalid-free of 0x[0-9a-f]+: offset 8 inside allocation #\d+ \(64 bytes, tail mode\), not its start/,
    ],
    [
      'poolThreadOverflow',
      [],
      SIGSEGV_EXIT,
      /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(128 bytes, tail mode\)/,
    ],
  ]) {
    test(`${bug}${flags.length ? ` (${flags.join(' ')})` : ''}`, async () => {
      const r = await guardRun([...RARE, ...flags], [script, bug]);
      assert.equal(r.code, exit, r.output);
      assert.match(r.output, error);
      assert.match(r.output, /backend native-heap/);
    });
  }
});

test('plain sampling (nativeSiteFirst 0) at 1 in 1,000,000 lets the same overflow through: what site-aware sampling buys', async () => {
  const r = await guardRun([...RARE, '--native-site-first', '0'], [script, 'mallocOverflow']);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /mallocOverflow: returned/);
  assert.doesNotMatch(r.output, /==mate-guard== ERROR/);
  assert.doesNotMatch(r.output, /call sites?/, 'no site line when site-aware sampling is off');
});

test('the summary says how many call sites were seen and that each was guarded on its first K calls', async () => {
  const code = `const a = require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))});
    for (let i = 0; i < 10; i++) a.nativeHeap.churn(2000, 64);
    console.log(a.nativeHeap.everyForm());`;
  const r = await guardRun([...RARE, '--native-site-first', '3'], ['-e', code]);
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /^10$/m, 'everyForm made its 10 allocations correctly');
  const m = SITES_LINE.exec(r.output);
  assert.ok(m, `a site line:\n${r.output}`);
  const sites = Number(m[1]);
  // churn's malloc and everyForm's ten allocation calls at least.
  assert.ok(sites >= 11, r.output);
  assert.equal(m[2] ?? m[4], '3');
  if (m[3] !== undefined) {
    assert.equal(Number(m[3]) + Number(m[5]), sites);
    assert.ok(Number(m[3]) >= 1, "churn's site was called 20,000 times");
  }
  // Sampled at 1 in a million, the guarded ones are the sites' first calls, not the 20,000 of churn.
  const c = /^\[mate-guard\] native heap: (\d+) of (\d+) allocations of the chosen modules guarded/m.exec(r.output);
  assert.ok(c, r.output);
  assert.ok(Number(c[2]) >= 20_010, r.output);
  assert.ok(Number(c[1]) >= 3 + 10 && Number(c[1]) <= sites * 3 + 5, r.output);
});

test('with every allocation guarded (sample rate 1) the summary has no site line', async () => {
  const r = await guardRun(['--native', '*buggy_addon.node'], [script, 'doubleFree']);
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /ERROR: double-free/);
  assert.doesNotMatch(r.output, /call sites?/);
});

describe('runners: sampled at 1 in 1,000,000, both planted bugs of the native-heap suites are still caught, each in its test', () => {
  const assertCaught = (r, file) => {
    assert.notEqual(r.code, 0, r.output);
    // node:test's reporter shows the reports inside its TAP lines: matched as text.
    assert.match(
      r.output,
      /==mate-guard== ERROR: double-free of 0x[0-9a-f]+: allocation #\d+ \(64 bytes, tail mode\) was already freed/,
    );
    assert.ok(
      r.output.includes(
        `==mate-guard== test: ${file} > native heap > a double free is reported for this test, and ignored`,
      ),
      r.output,
    );
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation \\?#\d+ \(64 bytes, tail mode\)/,
    );
    assert.ok(
      r.output.includes(
        `==mate-guard== test: ${file} > native heap > one byte past a malloc block faults at the write`,
      ),
      r.output,
    );
  };
  test('mate-node-test', async () => {
    const file = 'examples/node-test/native-heap.test.mjs';
    const r = await run(process.execPath, [
      path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js'),
      '--guard-alloc',
      '--guard-native',
      '*buggy_addon.node',
      '--guard-native-sample-rate',
      '1000000',
      file,
    ]);
    assertCaught(r, file);
  });
  test('mocha, settings from the environment (MATE_MOCHA_GUARD_NATIVE_SAMPLE_RATE, MATE_MOCHA_GUARD_NATIVE_SITE_FIRST)', async () => {
    const file = 'examples/mocha/native-heap.spec.cjs';
    const env = {
      MATE_MOCHA_GUARD_ALLOC: '1',
      MATE_MOCHA_GUARD_NATIVE: '*buggy_addon.node',
      MATE_MOCHA_GUARD_NATIVE_SAMPLE_RATE: '1000000',
      MATE_MOCHA_GUARD_NATIVE_SITE_FIRST: '2',
    };
    const r = await run(process.execPath, [path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js'), file], {
      env,
    });
    assertCaught(r, file);
  });
});

for (const [args, env, message] of [
  [
    [MATE, 'guard-run', '--native-site-first', 'many', '--', 'node', '-v'],
    {},
    'mate: --native-site-first: "many" is not allowed; use an integer from 0 to 65536',
  ],
  [
    [MATE, 'guard-run', '--native-site-first=-1', '--', 'node', '-v'],
    {},
    'mate: --native-site-first: "-1" is not allowed; use an integer from 0 to 65536',
  ],
  [
    [
      path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js'),
      '--guard-native-site-first',
      '1.5',
      'examples/node-test/clean.test.mjs',
    ],
    {},
    '--guard-native-site-first: "1.5" is not allowed; use an integer from 0 to 65536',
  ],
  [
    [path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js'), 'examples/node-test/clean.test.mjs'],
    { MATE_NODE_TEST_GUARD_ALLOC: '1', MATE_NODE_TEST_GUARD_NATIVE_SITE_FIRST: '70000' },
    'MATE_NODE_TEST_GUARD_NATIVE_SITE_FIRST: "70000" is not allowed; use an integer from 0 to 65536',
  ],
]) {
  test(`a bad nativeSiteFirst (${args.slice(1).join(' ')}${
    Object.keys(env).length
      ? ` with ${Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : ''
  }) stops with a clear error`, async () => {
    const r = await run(process.execPath, args, { env });
    assert.notEqual(r.code, 0, r.output);
    assert.ok(r.output.includes(message), r.output);
  });
}

test('installGuardAllocator({ nativeSiteFirst: 2.5 }) throws a clear error', async () => {
  const r = await run(process.execPath, [
    '-e',
    `
    const c = require(${JSON.stringify(path.join(ROOT, 'packages', 'core-native'))});
    try { c.installGuardAllocator({ nativeSiteFirst: 2.5 }); console.log('no error'); }
    catch (e) { console.log(e.name + ': ' + e.message); }
  `,
  ]);
  assert.ok(
    r.output.includes('GuardConfigError: nativeSiteFirst: 2.5 is not allowed; use an integer from 0 to 65536'),
    r.output,
  );
});
