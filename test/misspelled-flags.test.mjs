// A misspelled guard flag stops the run before any test, in every entry
// point, naming the word and the closest setting. (Before: plain mocha,
// mate-mocha and `vitest run --` silently ran in tail mode.)
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { BIN, guardRun, ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures');
const node = (script, args, cwd) => run(process.execPath, [script, ...args], { cwd });
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const JEST_SUITE = ['-c', path.join(FIX, 'jest', 'bugs', 'jest.config.js'), 'underflow'];

const cases = [
  [
    'plain mocha --guard-mod=head',
    () =>
      run(
        path.join(BIN, 'mocha'),
        ['--require', '@mate-guard/mocha', '--guard-alloc', '--guard-mod=head', 'canary/canary.spec.cjs'],
        { cwd: path.join(FIX, 'mocha') },
      ),
    'mate-guard: unknown option "--guard-mod"; did you mean --guard-mode?',
  ],
  [
    'mate-mocha --guard-mod head',
    () => node(MATE_MOCHA, ['--guard-alloc', '--guard-mod', 'head', 'canary/canary.spec.cjs'], path.join(FIX, 'mocha')),
    'mate-mocha: unknown option "--guard-mod"; did you mean --guard-mode?',
  ],
  [
    'vitest run -- --guard-mod head',
    () =>
      node(
        VITEST,
        ['run', 'underflow', '--', '--guard-alloc', '--guard-mod', 'head'],
        path.join(FIX, 'vitest', 'bugs'),
      ),
    'unknown option "--guard-mod"; did you mean --guard-mode?',
  ],
  [
    'mate-vitest --guard-allco',
    () => node(MATE_VITEST, ['run', 'underflow', '--guard-allco'], path.join(FIX, 'vitest', 'bugs')),
    'mate-vitest: unknown option "--guard-allco"; did you mean --guard-alloc?',
  ],
  [
    'mate-jest --no-guard-rerunn',
    () => node(MATE_JEST, ['--guard-alloc', '--no-guard-rerunn', ...JEST_SUITE], ROOT),
    'mate-jest: unknown option "--no-guard-rerunn"; did you mean --no-guard-rerun?',
  ],
  [
    'mate guard-run --mod head',
    () => guardRun(['--mod', 'head'], [path.join(ROOT, 'examples', 'scripts', 'underflow.js')]),
    'mate: unknown option "--mod"; did you mean --mode?',
  ],
  // The same for the other ways a setting is spelled: environment variables,
  // Jest's testEnvironmentOptions, Mocha's rc keys.
  [
    'MATE_VITEST_GUARD_MOD=head vitest run',
    () =>
      run(process.execPath, [VITEST, 'run', 'underflow'], {
        cwd: path.join(FIX, 'vitest', 'bugs'),
        env: { MATE_VITEST_GUARD_ALLOC: '1', MATE_VITEST_GUARD_MOD: 'head' },
      }),
    'unknown environment variable "MATE_VITEST_GUARD_MOD"; did you mean MATE_VITEST_GUARD_MODE?',
  ],
  [
    'MATE_MOCHA_GUARD_ALOC=1 mate-mocha',
    () =>
      run(process.execPath, [MATE_MOCHA, 'canary/canary.spec.cjs'], {
        cwd: path.join(FIX, 'mocha'),
        env: { MATE_MOCHA_GUARD_ALOC: '1' },
      }),
    'unknown environment variable "MATE_MOCHA_GUARD_ALOC"; did you mean MATE_MOCHA_GUARD_ALLOC?',
  ],
  [
    'jest testEnvironmentOptions { guardMod }',
    () =>
      run(process.execPath, [path.join(BIN, 'jest'), '-c', path.join(FIX, 'jest', 'native', 'jest.config.js')], {
        cwd: ROOT,
        env: { FIXTURE_GUARD_OPTIONS: '{"guardAlloc":true,"guardMod":"head"}' },
      }),
    'testEnvironmentOptions: unknown option "guardMod"; did you mean guardMode?',
  ],
  [
    'mocha rc guard-mod: head',
    () => run(path.join(BIN, 'mocha'), [], { cwd: path.join(FIX, 'mocha', 'rc-typo') }),
    'unknown option "guard-mod"; did you mean guard-mode?',
  ],
];

for (const [title, go, message] of cases) {
  test(`${title}: stops before any test with the closest setting`, async () => {
    const r = await go();
    assert.notEqual(r.code, 0, r.output);
    assert.ok(r.output.includes(message), `expected ${JSON.stringify(message)} in:\n${r.output}`);
    assert.doesNotMatch(r.output, /passing|failing|Test Files|Tests:.*(passed|failed)|==mate-guard==/, 'no test ran');
  });
}
