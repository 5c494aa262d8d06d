// The CUDA device settings: each a row of the one table, so every surface
// spells them the same; asking for a device turns guarding on.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const core = path.join(ROOT, 'packages/core-native/dist');
const { parseFlags, RUNNER_FLAGS, GUARD_RUN_FLAGS } = await import(path.join(core, 'settings/flags.js'));
// Jest's spelling of a setting is its package's (the adapter's), not core's.
const { jestSpelling } = await import(path.join(ROOT, 'packages/jest-env/dist/spelling.js'));
const { resolveRunnerSettings } = await import(path.join(core, 'settings/resolve.js'));
const { writeHandoff, readHandoff } = await import(path.join(core, 'settings/handoff.js'));
const { defaultSettings } = await import(path.join(core, 'settings/table.js'));

const throwsConfig = (fn, message) =>
  assert.throws(fn, (e) => e.name === 'GuardConfigError' && message.test(e.message), String(message));

test('--guard-device cuda (flag, env, Jest option) turns guarding on; --no-guard-alloc still wins', () => {
  const { values } = parseFlags(['--guard-device', 'cuda'], RUNNER_FLAGS);
  assert.equal(resolveRunnerSettings({ runner: 'vitest', flags: values, env: {} }).settings.enabled, true);
  assert.equal(
    resolveRunnerSettings({ runner: 'mocha', env: { MATE_MOCHA_GUARD_DEVICE: 'cuda' } }).settings.enabled,
    true,
  );
  const options = { values: { guardDevice: 'cuda' }, spelling: jestSpelling, source: 'testEnvironmentOptions' };
  assert.equal(resolveRunnerSettings({ runner: 'jest', env: {}, options }).settings.enabled, true);
  const off = parseFlags(['--guard-device', 'cuda', '--no-guard-alloc'], RUNNER_FLAGS).values;
  assert.equal(resolveRunnerSettings({ runner: 'vitest', flags: off, env: {} }).settings.enabled, false);
  assert.equal(resolveRunnerSettings({ runner: 'vitest', env: {} }).settings.enabled, false);
});

test('the device rows: defaults, guard-run spellings, and bad values named', () => {
  const d = defaultSettings({});
  assert.equal(d.device, undefined);
  assert.equal(d.syncOnFree, undefined, 'unset: each process picks (Node on, Python off)');
  assert.equal(d.cudaQuarantine, 'adaptive');
  assert.equal(d.trackLaunches, true);
  assert.equal(d.launchBlocking, false);
  const { values } = parseFlags(
    [
      '--device',
      'cuda',
      '--launch-blocking',
      '--cuda-quarantine',
      'strict',
      '--no-track-launches',
      '--sync-on-free',
      '--no-capture-stacks',
    ],
    GUARD_RUN_FLAGS,
  );
  assert.deepEqual(values, {
    device: 'cuda',
    launchBlocking: true,
    cudaQuarantine: 'strict',
    trackLaunches: false,
    syncOnFree: true,
    captureStacks: false,
  });
  throwsConfig(() => parseFlags(['--device', 'rocm'], GUARD_RUN_FLAGS), /--device: "rocm" is not a device; use cuda/);
  throwsConfig(
    () => resolveRunnerSettings({ runner: 'jest', env: { MATE_JEST_GUARD_CUDA_QUARANTINE: 'loose' } }),
    /MATE_JEST_GUARD_CUDA_QUARANTINE: "loose" is not a CUDA quarantine policy; use adaptive or strict/,
  );
});

test('the handoff carries them to Python processes: an unset syncOnFree stays unset', () => {
  const env = {};
  const settings = { ...defaultSettings({}), device: 'cuda', launchBlocking: true };
  writeHandoff({ settings, explicit: [] }, env);
  const json = JSON.parse(env.MATE_GUARD_SETTINGS);
  assert.equal(json.settings.device, 'cuda');
  assert.equal(json.settings.launchBlocking, true);
  assert.ok(!('syncOnFree' in json.settings), 'libmate_guard_cuda.so reads a missing key as unset');
  assert.equal(readHandoff(env).settings.syncOnFree, undefined);
});

// A CUDA setting acts only with the device guard: without it, one that asks for something is refused, named as
// given; a value at its default or a boolean turned off (what a run without the device does anyway) is not.
const { parseGuardRunArgs } = await import(path.join(core, 'cli/guard-run.js'));
const { resolveAllocatorConfig } = await import(path.join(core, 'install/config.js'));
const NO_DEVICE = (where, device) =>
  new RegExp(
    `^${`${where}: needs the device guard (${device});`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} without it no CUDA memory is guarded`,
  );

test('a CUDA setting without the device guard is refused, named as the flag, variable or option that set it', () => {
  const guardRun = (...flags) => parseGuardRunArgs([...flags, '--', 'node', '-e', '0']);
  throwsConfig(() => guardRun('--launch-blocking'), NO_DEVICE('--launch-blocking', '--device cuda'));
  throwsConfig(() => guardRun('--cuda-quarantine', 'strict'), NO_DEVICE('--cuda-quarantine', '--device cuda'));
  throwsConfig(() => guardRun('--device-exact-placement'), NO_DEVICE('--device-exact-placement', '--device cuda'));
  const runner = (flags, env, options) =>
    resolveRunnerSettings({ runner: 'node-test', flags: parseFlags(flags, RUNNER_FLAGS).values, env, options });
  throwsConfig(
    () => runner([], { MATE_NODE_TEST_GUARD_DUMP_INPUTS: '*k*' }),
    NO_DEVICE('MATE_NODE_TEST_GUARD_DUMP_INPUTS', 'MATE_NODE_TEST_GUARD_DEVICE=cuda'),
  );
  // The flag is the value in force, so the flag is named.
  throwsConfig(
    () => runner(['--guard-sync-on-free'], { MATE_NODE_TEST_GUARD_SYNC_ON_FREE: '1' }),
    NO_DEVICE('--guard-sync-on-free', '--guard-device cuda'),
  );
  const options = { values: { guardLaunchBlocking: true }, spelling: jestSpelling, source: 'testEnvironmentOptions' };
  throwsConfig(
    () => runner([], {}, options),
    NO_DEVICE('testEnvironmentOptions guardLaunchBlocking', "guardDevice: 'cuda'"),
  );
  throwsConfig(
    () => resolveAllocatorConfig({ launchBlocking: true }, {}),
    NO_DEVICE('installGuardAllocator launchBlocking', "device: 'cuda'"),
  );
});

test('a CUDA setting at its default or turned off needs no device; with the device guard (from any source) every one is taken', () => {
  const { settings } = parseGuardRunArgs([
    '--track-launches',
    '--no-track-launches',
    '--no-launch-blocking',
    '--no-sync-on-free',
    '--cuda-quarantine',
    'adaptive',
    '--',
    'node',
  ]);
  assert.equal(settings.trackLaunches, false);
  assert.equal(settings.device, undefined);
  // A lower source's request overridden by a flag at the default asks for nothing.
  const { values } = parseFlags(['--no-guard-launch-blocking'], RUNNER_FLAGS);
  const quiet = resolveRunnerSettings({
    runner: 'mocha',
    flags: values,
    env: { MATE_MOCHA_GUARD_LAUNCH_BLOCKING: '1' },
  });
  assert.equal(quiet.settings.launchBlocking, false);
  // What mate replay hands a runner: every setting, defaults too.
  const handed = { MATE_VITEST_GUARD_TRACK_LAUNCHES: 'true', MATE_VITEST_GUARD_CUDA_QUARANTINE: 'adaptive' };
  assert.equal(resolveRunnerSettings({ runner: 'vitest', env: handed }).settings.trackLaunches, true);

  const all = ['--launch-blocking', '--dump-inputs', '*k*', '--cuda-quarantine', 'strict', '--device-exact-placement'];
  const withDevice = parseGuardRunArgs(['--device', 'cuda', ...all, '--sync-on-free', '--', 'node']).settings;
  assert.deepEqual(
    [withDevice.launchBlocking, withDevice.dumpInputs, withDevice.cudaQuarantine, withDevice.syncOnFree],
    [true, '*k*', 'strict', true],
  );
  // The device from the environment, the CUDA setting from a flag.
  const mixed = resolveRunnerSettings({
    runner: 'jest',
    flags: parseFlags(['--guard-launch-blocking'], RUNNER_FLAGS).values,
    env: { MATE_JEST_GUARD_DEVICE: 'cuda' },
  });
  assert.equal(mixed.settings.launchBlocking, true);
  assert.equal(resolveAllocatorConfig({ device: 'cuda', dumpInputs: '*k*' }, {}).dumpInputs, '*k*');
});
