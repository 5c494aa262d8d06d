// `mate replay` keeps how the recorded run ran its tests: worker counts and
// worker memory limits (Jest's `-w=2`, `--workerIdleMemoryLimit=1GB`,
// Mocha's `--parallel --jobs=2`, Vitest's `--maxWorkers=2`), declared safe
// in each runner package's option table. A failure from worker mode replays
// in worker mode and ends the same way: a crashed worker is a failed test
// file (exit 1), not a runner killed in band (139).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const PKG = path.join(ROOT, 'packages');
const MATE_JEST = path.join(PKG, 'jest-env', 'bin', 'mate-jest.js');
const MATE_MOCHA = path.join(PKG, 'mocha-plugin', 'bin', 'mate-mocha.js');
const MATE_VITEST = path.join(PKG, 'vitest-plugin', 'bin', 'mate-vitest.mjs');

/** Runs a recorded run with a fresh --guard-report-dir; returns it and its run's directory. */
async function recorded(args, opts = {}) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-workers-'));
  const r = await run(process.execPath, args(parent), { timeout: 90_000, ...opts });
  const dirs = fs.readdirSync(parent);
  assert.equal(dirs.length, 1, r.output);
  return { ...r, dir: path.join(parent, dirs[0]) };
}

const replay = (dir) => run(process.execPath, [MATE, 'replay', dir], { cwd: ROOT, timeout: 90_000 });
/** The command replay printed it runs. */
const command = (stderr) => stderr.split('\n').find((l) => l.startsWith('[mate-guard] replay runs in ')) ?? '';

describe('mate replay keeps worker-count and memory-limit flags', () => {
  test('jest -w=2 --workerIdleMemoryLimit=1GB: the crash replays in a Jest worker (exit 1, the file failed), not in band (139)', async () => {
    const rec = await recorded((dir) => [
      MATE_JEST,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--no-guard-rerun',
      '-c',
      'test/fixtures/jest/bugs/jest.config.js',
      '-w=2',
      '--workerIdleMemoryLimit=1GB',
      'overflow',
    ]);
    assert.equal(rec.code, 1, rec.output);
    assert.match(rec.output, /\[mate-guard\] Jest worker \d+ was killed by a guard fault: heap-buffer-overflow/);
    const r = await replay(rec.dir);
    assert.equal(r.code, 1, r.output);
    assert.match(command(r.stderr), / -w=2 --workerIdleMemoryLimit=1GB /);
    assert.doesNotMatch(r.stderr, /left out of the replay/);
    assert.match(r.output, /\[mate-guard\] Jest worker \d+ was killed by a guard fault: heap-buffer-overflow/);
    assert.doesNotMatch(r.output, /\(in band\)/);
    assert.match(r.output, /Tests: +1 failed, 1 total/);
  });

  test('jest --maxWorkers 2 (value apart): kept with its value; the replay runs as the record did', async () => {
    const rec = await recorded((dir) => [
      MATE_JEST,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--no-guard-rerun',
      '-c',
      'test/fixtures/jest/bugs/jest.config.js',
      '--maxWorkers',
      '2',
      '--workerIdleMemoryLimit=512MB',
      'overflow',
    ]);
    assert.equal(rec.code, 1, rec.output);
    const r = await replay(rec.dir);
    assert.equal(r.code, rec.code, r.output);
    assert.match(command(r.stderr), / --maxWorkers 2 --workerIdleMemoryLimit=512MB /);
    assert.doesNotMatch(r.stderr, /left out of the replay/);
  });

  test('mocha --parallel --jobs=2: the crash replays in a mocha worker, with the same exit code as recorded', async () => {
    const rec = await recorded((dir) => [
      MATE_MOCHA,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--parallel',
      '--jobs=2',
      'examples/mocha/overflow.spec.cjs',
      'examples/mocha/clean.spec.cjs',
    ]);
    assert.notEqual(rec.code, 0, rec.output);
    assert.notEqual(rec.code, 139, `a worker's crash is no crash of mocha itself:\n${rec.output}`);
    const r = await replay(rec.dir);
    assert.equal(r.code, rec.code, r.output);
    assert.match(command(r.stderr), / --parallel --jobs=2( |$)/);
    assert.doesNotMatch(r.stderr, /left out of the replay/);
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow/);
  });

  test('vitest --maxWorkers=2: kept; the replay fails the crashed file in its fork as the record did', async () => {
    const cwd = path.join(ROOT, 'test', 'fixtures', 'vitest', 'bugs');
    const rec = await recorded(
      (dir) => [
        MATE_VITEST,
        'run',
        '--maxWorkers=2',
        'overflow',
        '--guard-alloc',
        '--guard-report-dir',
        dir,
        '--no-guard-rerun',
      ],
      { cwd },
    );
    assert.equal(rec.code, 1, rec.output);
    const r = await replay(rec.dir);
    assert.equal(r.code, 1, r.output);
    assert.match(command(r.stderr), / --maxWorkers=2( |$)/);
    assert.doesNotMatch(r.stderr, /left out of the replay/);
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow/);
  });
});
