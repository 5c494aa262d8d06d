// The plain runners (no mate-* wrapper) in each of their pools and worker
// set-ups: a fault is reported with its test, the run's owner in the
// runner's main process names the dead worker's test and prints the
// summary where that process survives, and the exit code fails. Where a
// pool loses the whole run (Vitest threads, vmThreads; Jest in band) the
// dying process's own report is what is left, and the plugin said so.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { ROOT, run } from './helpers/run.mjs';

const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const SUMMARY =
  /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, peak live \d+, 0 unguarded fallbacks, 1 violation, (?:1 process died, )?0 tests skipped by tag$/m;

function assertFaultReport(output, test) {
  assert.match(
    output,
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/m,
  );
  assert.ok(output.includes(`==mate-guard== test: ${test}\n`), output);
}

describe('plain vitest, each pool', () => {
  const vitest = (pool) =>
    run(process.execPath, [VITEST, 'run', `--pool=${pool}`, '--', '--guard-alloc'], {
      cwd: path.join(ROOT, 'test', 'fixtures', 'vitest', 'pools'),
    });
  const TEST = 'b-overflow.test.mjs > fillInclusive overflows by one';

  for (const pool of ['forks', 'vmForks']) {
    test(`${pool}: the worker dies, the main process names its test, the clean file passes, the summary closes the run`, async () => {
      const r = await vitest(pool);
      assert.notEqual(r.code, 0, r.output);
      assertFaultReport(r.output, TEST);
      assert.match(
        r.output,
        new RegExp(
          `^\\[mate-guard\\] test worker \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${TEST};`,
          'm',
        ),
      );
      assert.match(r.output, /Tests +1 failed \| 1 passed/);
      assert.match(r.output, SUMMARY);
      assert.match(r.output, /, 1 violation, 1 process died, /, 'the summary counts the dead worker');
    });
  }

  for (const pool of ['threads', 'vmThreads']) {
    test(`${pool}: one process for every file, so the fault ends the run: warned at start, the report names the test`, async () => {
      const r = await vitest(pool);
      assert.ok(r.code === 139 || r.signal === 'SIGSEGV', `${r.code} ${r.signal}\n${r.output}`);
      assert.match(
        r.output,
        new RegExp(
          `^\\[mate-guard\\] warning: pool "${pool}" runs test files inside one process, so a guard fault ends the whole run`,
          'm',
        ),
      );
      assertFaultReport(r.output, TEST);
    });
  }
});

describe('plain jest with the environment and the reporter', () => {
  const jest = (args) =>
    run(
      process.execPath,
      [JEST, '-c', path.join(ROOT, 'test', 'fixtures', 'jest', 'plain', 'jest.config.js'), ...args],
      { env: { MATE_JEST_GUARD_ALLOC: '1' }, timeout: 90_000 },
    );
  const TEST = 'test/fixtures/jest/bugs/overflow.test.js > fill > fills one byte too many';

  test("with workers: the dead worker's test is named and back in Jest's results, its report reprinted, the summary line", async () => {
    const r = await jest(['-w', '2', '--workerIdleMemoryLimit=1GB', 'overflow', 'clean-1']);
    assert.notEqual(r.code, 0, r.output);
    assertFaultReport(r.output, TEST);
    assert.match(
      r.output,
      new RegExp(
        `^\\[mate-guard\\] Jest worker \\d+ was killed by a guard fault: heap-buffer-overflow .* while running ${TEST.replace(/[.>]/g, '\\$&')};`,
        'm',
      ),
    );
    assert.match(
      r.output,
      /\[mate-guard\] its report, from that JSON file:\n==mate-guard== ERROR: heap-buffer-overflow/,
    );
    assert.match(r.output, /Tests: +1 failed, 9 passed, 10 total/, 'the crashed test counts');
    assert.match(r.output, SUMMARY);
    assert.match(r.output, /, 1 violation, 1 process died, /, 'the summary counts the dead worker');
  });

  test('in band: the fault kills Jest itself; its report names the test (the summary needs mate-jest, which watches from outside)', async () => {
    const r = await jest(['-i', 'overflow']);
    assert.ok(r.code === 139 || r.signal === 'SIGSEGV', `${r.code} ${r.signal}\n${r.output}`);
    assertFaultReport(r.output, TEST);
  });

  test('in band, clean and canary damage: Jest survives and the reporter closes the run', async () => {
    const r = await jest(['-i', 'underflow', 'clean-1']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /==mate-guard== ERROR: canary-corruption: 1 byte before the start/);
    assert.match(r.output, SUMMARY);
    assert.doesNotMatch(r.output, /process died/, 'no process died');
    const off = await run(process.execPath, [
      JEST,
      '-c',
      path.join(ROOT, 'test', 'fixtures', 'jest', 'plain', 'jest.config.js'),
      '-i',
      'clean-1',
    ]);
    assert.equal(off.code, 0, off.output);
    assert.doesNotMatch(off.output, /\[mate-guard\]/, 'guarding off: the reporter stays silent');
  });
});
