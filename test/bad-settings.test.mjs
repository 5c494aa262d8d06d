// A bad setting (flag, MATE_<RUNNER>_GUARD_* variable, plugin or
// environment option, rc key) stops the run the same way in every entry
// point: one line, `<program>: <what was wrong>`, nothing else, and exit
// status 2, the usage-error status (1 stays "a test or a violation failed"),
// so CI can tell a broken configuration from a failing suite. Before:
// mate-vitest and plain mocha exited 1, and a bad MATE_VITEST_GUARD_* value
// came out inside Vitest's boxed "Startup Error". Every CLI (mate and each
// mate-*) prints it through the one path, core's runCli.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { BIN, MATE, ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures');
// The options fixture's vitest.config.ts draws a Vite notice of its own (about its syntax).
const QUIET = { VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' };
const node = (script, args, cwd, env) => run(process.execPath, [script, ...args], { cwd, env: { ...QUIET, ...env } });
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const MATE_NODE_TEST = path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js');
const NODE_TEST_DIR = path.join(FIX, 'node-test', 'clean');
const JEST_NATIVE = ['-c', path.join(FIX, 'jest', 'native', 'jest.config.js')];
const JEST_REPORTER = ['--reporters', 'default', '--reporters', '@mate-guard/jest-env/reporter'];
const VITEST_OPTIONS = path.join(FIX, 'vitest', 'options');
const MOCHA_SPEC = ['clean/clean.spec.cjs'];
const MODE = (source, value) => `${source}: "${value}" is not a guard mode; use tail or head`;
const BOOL = (source, value) => `${source}: "${value}" is not a boolean; use 1/true/yes/on or 0/false/no/off`;
// A CUDA setting without the device guard would do nothing: refused the same way, naming it as given.
const NO_DEVICE = (source, device) =>
  `${source}: needs the device guard (${device}); without it no CUDA memory is guarded and the setting would do nothing`;

const cases = [
  // mate and mate guard-run
  [
    'mate guard-run --mode sideways',
    () => node(MATE, ['guard-run', '--mode', 'sideways', '--', process.execPath, '-e', '0']),
    `mate: ${MODE('--mode', 'sideways')}`,
  ],
  [
    'mate guard-run --launch-blocking (no --device cuda)',
    () => node(MATE, ['guard-run', '--launch-blocking', '--', process.execPath, '-e', '0']),
    `mate: ${NO_DEVICE('--launch-blocking', '--device cuda')}`,
  ],
  [
    'mate guard-run --dump-inputs (no --device cuda)',
    () => node(MATE, ['guard-run', '--dump-inputs', '*k*', '--', process.execPath, '-e', '0']),
    `mate: ${NO_DEVICE('--dump-inputs', '--device cuda')}`,
  ],
  [
    'mate frobnicate',
    () => node(MATE, ['frobnicate']),
    'mate: unknown command "frobnicate"; known: guard-run, report, replay, options, build-native',
  ],
  [
    'mate options --runner karma',
    () => node(MATE, ['options', '--runner', 'karma']),
    'mate: --runner: "karma" is not a runner installed here; installed: jest, mocha, node-test, vitest',
  ],
  // Vitest: the drop-in CLI, and plain vitest with the plugin (its config hook)
  [
    'mate-vitest --guard-mode sideways',
    () => node(MATE_VITEST, ['run', '--guard-mode', 'sideways'], VITEST_OPTIONS),
    `mate-vitest: ${MODE('--guard-mode', 'sideways')}`,
  ],
  [
    'MATE_VITEST_GUARD_ALLOC=maybe mate-vitest',
    () => node(MATE_VITEST, ['run'], VITEST_OPTIONS, { MATE_VITEST_GUARD_ALLOC: 'maybe' }),
    `mate-vitest: ${BOOL('MATE_VITEST_GUARD_ALLOC', 'maybe')}`,
  ],
  [
    'MATE_VITEST_GUARD_MODE=sideways vitest',
    () => node(VITEST, ['run'], VITEST_OPTIONS, { MATE_VITEST_GUARD_ALLOC: '1', MATE_VITEST_GUARD_MODE: 'sideways' }),
    `mate-guard: ${MODE('MATE_VITEST_GUARD_MODE', 'sideways')}`,
  ],
  [
    'guardAlloc({ enabled: true, cudaQuarantine: "strict" }) under vitest (no device)',
    () =>
      node(VITEST, ['run'], VITEST_OPTIONS, { FIXTURE_GUARD_OPTIONS: '{"enabled":true,"cudaQuarantine":"strict"}' }),
    `mate-guard: ${NO_DEVICE('guardAlloc() options cudaQuarantine', "device: 'cuda'")}`,
  ],
  [
    'vitest run -- --guard-mode=diagonal',
    () => node(VITEST, ['run', '--', '--guard-mode=diagonal'], VITEST_OPTIONS),
    `mate-guard: ${MODE('--guard-mode', 'diagonal')}`,
  ],
  [
    'guardAlloc({ mode: "sideways" }) under vitest',
    () => node(VITEST, ['run'], VITEST_OPTIONS, { FIXTURE_GUARD_OPTIONS: '{"enabled":true,"mode":"sideways"}' }),
    `mate-guard: ${MODE('guardAlloc() options mode', 'sideways')}`,
  ],
  [
    'guardAlloc({ mode: "sideways" }) under mate-vitest',
    () => node(MATE_VITEST, ['run'], VITEST_OPTIONS, { FIXTURE_GUARD_OPTIONS: '{"enabled":true,"mode":"sideways"}' }),
    `mate-vitest: ${MODE('guardAlloc() options mode', 'sideways')}`,
  ],
  // Jest: the drop-in CLI; plain jest with the reporter (Jest's main process)
  [
    'mate-jest --guard-mode sideways',
    () => node(MATE_JEST, ['--guard-mode', 'sideways', ...JEST_NATIVE]),
    `mate-jest: ${MODE('--guard-mode', 'sideways')}`,
  ],
  [
    'MATE_JEST_GUARD_ALLOC=maybe mate-jest',
    () => node(MATE_JEST, JEST_NATIVE, ROOT, { MATE_JEST_GUARD_ALLOC: 'maybe' }),
    `mate-jest: ${BOOL('MATE_JEST_GUARD_ALLOC', 'maybe')}`,
  ],
  [
    'mate-jest with testEnvironmentOptions { guardMode: "sideways" }',
    () => node(MATE_JEST, JEST_NATIVE, ROOT, { FIXTURE_GUARD_OPTIONS: '{"guardAlloc":true,"guardMode":"sideways"}' }),
    `mate-guard: ${MODE('testEnvironmentOptions guardMode', 'sideways')}`,
  ],
  [
    'mate-jest with testEnvironmentOptions { guardLaunchBlocking: true } (no device)',
    () =>
      node(MATE_JEST, JEST_NATIVE, ROOT, { FIXTURE_GUARD_OPTIONS: '{"guardAlloc":true,"guardLaunchBlocking":true}' }),
    `mate-guard: ${NO_DEVICE('testEnvironmentOptions guardLaunchBlocking', "guardDevice: 'cuda'")}`,
  ],
  [
    'MATE_JEST_GUARD_MODE=sideways jest (with the reporter)',
    () =>
      node(path.join(BIN, 'jest'), [...JEST_NATIVE, ...JEST_REPORTER], ROOT, {
        MATE_JEST_GUARD_ALLOC: '1',
        MATE_JEST_GUARD_MODE: 'sideways',
      }),
    `mate-guard: ${MODE('MATE_JEST_GUARD_MODE', 'sideways')}`,
  ],
  [
    'jest with the reporter, testEnvironmentOptions { guardAlloc: "perhaps" }',
    () =>
      node(path.join(BIN, 'jest'), [...JEST_NATIVE, ...JEST_REPORTER], ROOT, {
        FIXTURE_GUARD_OPTIONS: '{"guardAlloc":"perhaps"}',
      }),
    `mate-guard: ${BOOL('testEnvironmentOptions guardAlloc', 'perhaps')}`,
  ],
  [
    'MATE_JEST_GUARD_ALLOC=perhaps jest (with the reporter)',
    () => node(path.join(BIN, 'jest'), [...JEST_NATIVE, ...JEST_REPORTER], ROOT, { MATE_JEST_GUARD_ALLOC: 'perhaps' }),
    `mate-guard: ${BOOL('MATE_JEST_GUARD_ALLOC', 'perhaps')}`,
  ],
  // Mocha: the drop-in CLI and the plugin in plain mocha
  [
    'mate-mocha --guard-mode sideways',
    () => node(MATE_MOCHA, ['--guard-mode', 'sideways', ...MOCHA_SPEC], path.join(FIX, 'mocha')),
    `mate-mocha: ${MODE('--guard-mode', 'sideways')}`,
  ],
  [
    'mate-mocha --guard-sync-on-free (no device)',
    () => node(MATE_MOCHA, ['--guard-sync-on-free', ...MOCHA_SPEC], path.join(FIX, 'mocha')),
    `mate-mocha: ${NO_DEVICE('--guard-sync-on-free', '--guard-device cuda')}`,
  ],
  [
    'MATE_MOCHA_GUARD_MODE=x mate-mocha',
    () => node(MATE_MOCHA, MOCHA_SPEC, path.join(FIX, 'mocha'), { MATE_MOCHA_GUARD_MODE: 'x' }),
    `mate-mocha: ${MODE('MATE_MOCHA_GUARD_MODE', 'x')}`,
  ],
  [
    'mocha --require @mate-guard/mocha --guard-mode=sideways',
    () =>
      run(path.join(BIN, 'mocha'), ['--require', '@mate-guard/mocha', '--guard-mode=sideways', ...MOCHA_SPEC], {
        cwd: path.join(FIX, 'mocha'),
      }),
    `mate-guard: ${MODE('--guard-mode', 'sideways')}`,
  ],
  [
    'MATE_MOCHA_GUARD_ALLOC=maybe mocha --require @mate-guard/mocha',
    () =>
      run(path.join(BIN, 'mocha'), ['--require', '@mate-guard/mocha', ...MOCHA_SPEC], {
        cwd: path.join(FIX, 'mocha'),
        env: { MATE_MOCHA_GUARD_ALLOC: 'maybe' },
      }),
    `mate-guard: ${BOOL('MATE_MOCHA_GUARD_ALLOC', 'maybe')}`,
  ],
  [
    'mocha rc guard-mode: diagonal',
    () => run(path.join(BIN, 'mocha'), [], { cwd: path.join(FIX, 'mocha', 'rc-bad') }),
    `mate-guard: ${MODE('mocha config (.mocharc / package.json "mocha") key guard-mode', 'diagonal')}`,
  ],
  // node:test: the drop-in CLI, and the hook in plain node --test (its main process)
  [
    'mate-node-test --guard-mode sideways',
    () => node(MATE_NODE_TEST, ['--guard-mode', 'sideways'], NODE_TEST_DIR),
    `mate-node-test: ${MODE('--guard-mode', 'sideways')}`,
  ],
  [
    'MATE_NODE_TEST_GUARD_LAUNCH_BLOCKING=1 mate-node-test (no device)',
    () => node(MATE_NODE_TEST, [], NODE_TEST_DIR, { MATE_NODE_TEST_GUARD_LAUNCH_BLOCKING: '1' }),
    `mate-node-test: ${NO_DEVICE('MATE_NODE_TEST_GUARD_LAUNCH_BLOCKING', 'MATE_NODE_TEST_GUARD_DEVICE=cuda')}`,
  ],
  [
    'MATE_NODE_TEST_GUARD_MODE=x node --test --require @mate-guard/node-test',
    () =>
      run(process.execPath, ['--test', '--require', '@mate-guard/node-test'], {
        cwd: NODE_TEST_DIR,
        env: { MATE_NODE_TEST_GUARD_ALLOC: '1', MATE_NODE_TEST_GUARD_MODE: 'x' },
      }),
    `mate-guard: ${MODE('MATE_NODE_TEST_GUARD_MODE', 'x')}`,
  ],
];

for (const [title, go, line] of cases) {
  test(`${title}: exit 2 and one line`, async () => {
    const r = await go();
    assert.equal(r.output, `${line}\n`, `the whole output is the one line (exit ${r.code})`);
    assert.equal(r.code, 2, r.output);
  });
}

test('plain jest with the environment and no reporter: Jest fails the file (its status, 1) with the same message', async () => {
  // Only the reporter runs in Jest's main process; without it the setting is
  // first read in the test file's environment, where Jest owns the outcome.
  const r = await node(path.join(BIN, 'jest'), JEST_NATIVE, ROOT, {
    MATE_JEST_GUARD_ALLOC: '1',
    MATE_JEST_GUARD_MODE: 'sideways',
  });
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    new RegExp(
      `Test suite failed to run\\s+GuardConfigError: ${MODE('MATE_JEST_GUARD_MODE', 'sideways').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
    ),
  );
  assert.doesNotMatch(r.output, /Tests: +\d+ passed/);
});
