// The C++ unit tier (packages/core-native/test/cpp: core/, crash/describe, device parts,
// the device allocator's ready-range pool over the simulated driver,
// the handoff reader, module matching), built with the addon by `npm
// install` and run here through ctest, so `npm test` runs it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const BUILD = path.join(ROOT, 'packages', 'core-native', 'build');

test('the C++ unit tests pass (ctest)', () => {
  assert.ok(
    fs.existsSync(path.join(BUILD, 'CTestTestfile.cmake')),
    `no C++ unit tests in ${BUILD}: run npm install (it builds them)`,
  );
  const r = spawnSync('ctest', ['--test-dir', BUILD, '--output-on-failure'], { encoding: 'utf8' });
  assert.equal(r.error, undefined, `ctest could not run: ${r.error}`);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /100% tests passed/, r.stdout);
});
