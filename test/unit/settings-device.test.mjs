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
