// The version check every runner package runs once against its own
// peerDependencies range: the ranges those packages declare, read from
// their package.json, and the one-line refusal outside them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { checkRunnerVersion, versionInRange } = await import(
  path.join(ROOT, 'packages/core-native/dist/run/runner-version.js')
);
const { GuardConfigError } = await import(path.join(ROOT, 'packages/core-native/dist/errors.js'));
const peer = (dir, name) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', dir, 'package.json'), 'utf8')).peerDependencies[name];

test('each runner package range: in and out, as npm reads it', () => {
  const cases = [
    [
      peer('vitest-plugin', 'vitest'),
      { in: ['4.1.0', '4.1.12', '4.9.0', '5.0.0-beta.3', '5.2.1'], out: ['3.2.4', '4.0.18', '6.0.0'] },
    ],
    [peer('jest-env', 'jest'), { in: ['29.0.0', '29.7.0', '30.5.2'], out: ['28.1.3', '27.5.1', '31.0.0'] }],
    [peer('mocha-plugin', 'mocha'), { in: ['10.0.0', '10.8.2', '12.0.3', '13.0.0'], out: ['5.2.0', '8.4.0', '9.2.2'] }],
    ['>=20', { in: ['v20.0.0', 'v20.20.2', 'v22.12.0'], out: ['v18.20.4', 'v16.0.0'] }],
  ];
  for (const [range, { in: inside, out }] of cases) {
    for (const v of inside) assert.equal(versionInRange(v, range), true, `${v} in ${range}`);
    for (const v of out) assert.equal(versionInRange(v, range), false, `${v} not in ${range}`);
  }
  assert.equal(versionInRange('1.2.9', '~1.2'), true);
  assert.equal(versionInRange('1.3.0', '~1.2'), false);
  assert.equal(versionInRange('7.1.0', '>=6 <8'), true);
  assert.equal(versionInRange('8.0.0', '>=6 <8'), false);
  assert.equal(versionInRange('not a version', '*'), false);
});

test('outside the range: one GuardConfigError line naming the runner, its version, the range and what is missing; an unknown version passes', () => {
  const check = { runner: 'jest', supported: '^29 || ^30', plugin: '@mate-guard/jest-env', missing: 'X is missing' };
  assert.throws(
    () => checkRunnerVersion({ ...check, version: '28.1.3' }),
    (err) => {
      assert.ok(err instanceof GuardConfigError);
      assert.equal(
        err.message,
        'jest 28.1.3 is not supported by @mate-guard/jest-env (it needs jest ^29 || ^30): X is missing; use a supported jest, or run it without mate-guard',
      );
      return true;
    },
  );
  assert.doesNotThrow(() => checkRunnerVersion({ ...check, version: '30.5.2' }));
  assert.doesNotThrow(() => checkRunnerVersion({ ...check, version: undefined }));
});

test("node:test's package checks the running Node against its own engines range", async () => {
  const { checkNodeVersion } = await import(path.join(ROOT, 'packages/node-test/dist/hooks/node-version.js'));
  assert.doesNotThrow(() => checkNodeVersion());
  assert.throws(
    () => checkNodeVersion('v18.20.4'),
    /^GuardConfigError: node 18\.20\.4 is not supported by @mate-guard\/node-test \(it needs node >=20\): /,
  );
});

test("Jest's package reads the running Jest's version from the package above its executable", async () => {
  const { jestVersionAbove } = await import(path.join(ROOT, 'packages/jest-env/dist/jest-version.js'));
  const jest = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/jest/package.json'), 'utf8')).version;
  assert.equal(jestVersionAbove(path.join(ROOT, 'node_modules/jest/bin/jest.js')), jest);
  assert.equal(jestVersionAbove(path.join(ROOT, 'node_modules/.bin/jest')), jest); // through the link
  assert.equal(jestVersionAbove(undefined), undefined);
});
