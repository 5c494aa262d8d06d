// A guarded run in which the runner finds no test to run (a filter that
// matches nothing, a shard past the last file, an empty folder), or refuses
// an argument before it runs any: each mate-* CLI exits as its plain runner
// does and leaves the runner's own words alone. Before: mate-jest exited 2
// and blamed the environment or a docblock ("no test file used
// @mate-guard/jest-env"), also for `--passWithNoTests` and for Jest's own
// "Unrecognized CLI Parameter"; mate-node-test told a user already running
// it to "run mate-node-test"; mate-vitest blamed a missing guardAlloc()
// plugin after Vitest's own "Unknown option" (exit 2 where Vitest says 1).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

import { BIN, ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures');
const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const MATE_NODE_TEST = path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js');

/** Six files: --shard=6/6 of a filter that keeps two has none. */
const JEST_CLEAN = ['-c', path.join(FIX, 'jest', 'clean', 'jest.config.js')];
const BLAME = /no test process was guarded|no test file used|docblock|run mate-node-test/;

const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-no-tests-'));
after(() => fs.rmSync(empty, { recursive: true, force: true }));

const node = (script, args, opts = {}) => run(process.execPath, [script, ...args], { timeout: 90_000, ...opts });

/** The plain runner's and the mate-* CLI's run of the same set-up: same exit code, no mate-guard blame. */
async function assertSameAsPlain(plain, guarded, code) {
  const [p, g] = await Promise.all([plain(), guarded()]);
  assert.equal(p.code, code, `plain runner:\n${p.output}`);
  assert.equal(g.code, code, `mate-guard:\n${g.output}`);
  assert.doesNotMatch(g.output, BLAME);
  return { plain: p, guarded: g };
}

describe('mate-jest', () => {
  const cases = [
    ['--shard=6/6 of two files', ['clean-[12]', '--shard=6/6']],
    ['a filter that matches nothing', ['no-such-test-file']],
    ['an empty folder (--roots)', ['--roots', empty]],
  ];
  for (const [what, args] of cases) {
    test(`${what}: exit 0 with --passWithNoTests, and Jest's "No tests found" exit 1 without`, async () => {
      const { guarded } = await assertSameAsPlain(
        () => node(JEST, [...JEST_CLEAN, ...args, '--passWithNoTests']),
        () => node(MATE_JEST, ['--guard-alloc', ...JEST_CLEAN, ...args, '--passWithNoTests']),
        0,
      );
      assert.match(guarded.output, /No tests found, exiting with code 0/);
      const without = await assertSameAsPlain(
        () => node(JEST, [...JEST_CLEAN, ...args]),
        () => node(MATE_JEST, ['--guard-alloc', ...JEST_CLEAN, ...args]),
        1,
      );
      assert.match(without.guarded.output, /No tests found, exiting with code 1/);
    });
  }

  test("an argument Jest refuses (--workerIdleMemoryLimit 1GB, with a space): Jest's own error and exit code, nothing else", async () => {
    const { plain, guarded } = await assertSameAsPlain(
      () => node(JEST, [...JEST_CLEAN, '--workerIdleMemoryLimit', '1GB']),
      () => node(MATE_JEST, ['--guard-alloc', ...JEST_CLEAN, '--workerIdleMemoryLimit', '1GB']),
      1,
    );
    assert.match(plain.output, /Unrecognized CLI Parameter/);
    assert.match(guarded.output, /Unrecognized CLI Parameter/);
    assert.doesNotMatch(guarded.output, /\[mate-guard\]/);
  });

  test('a run that found tests still gets its summary (the no-tests rule needs Jest to have found none)', async () => {
    const r = await node(MATE_JEST, ['--guard-alloc', ...JEST_CLEAN, 'clean-1', '--passWithNoTests']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*0 violations/m);
  });
});

describe('mate-node-test', () => {
  test("an empty folder: node --test's exit 0, and no advice to run mate-node-test", async () => {
    const { guarded } = await assertSameAsPlain(
      () => run(process.execPath, ['--test'], { cwd: empty }),
      () => node(MATE_NODE_TEST, ['--guard-alloc'], { cwd: empty }),
      0,
    );
    assert.match(guarded.output, /^# tests 0$/m);
  });

  test("a test file that is not there: node's own error and exit 1", async () => {
    const { guarded } = await assertSameAsPlain(
      () => run(process.execPath, ['--test', 'no-such.test.mjs'], { cwd: empty }),
      () => node(MATE_NODE_TEST, ['--guard-alloc', 'no-such.test.mjs'], { cwd: empty }),
      1,
    );
    assert.match(guarded.output, /Could not find '.*no-such\.test\.mjs'/);
  });

  test("an option node refuses: node's own error and exit code (9), nothing of ours", async () => {
    const { guarded } = await assertSameAsPlain(
      () => run(process.execPath, ['--test', '--bogus-option'], { cwd: empty }),
      () => node(MATE_NODE_TEST, ['--guard-alloc', '--bogus-option'], { cwd: empty }),
      9,
    );
    assert.match(guarded.output, /bad option: --bogus-option/);
    assert.doesNotMatch(guarded.output, /\[mate-guard\]/);
  });
});

describe('mate-vitest', () => {
  const cwd = path.join(FIX, 'vitest', 'clean');
  test('a filter that matches nothing: exit 0 with --passWithNoTests, 1 without, as vitest run', async () => {
    await assertSameAsPlain(
      () => node(VITEST, ['run', 'no-such-file', '--passWithNoTests'], { cwd }),
      () => node(MATE_VITEST, ['run', '--guard-alloc', 'no-such-file', '--passWithNoTests'], { cwd }),
      0,
    );
    await assertSameAsPlain(
      () => node(VITEST, ['run', 'no-such-file'], { cwd }),
      () => node(MATE_VITEST, ['run', '--guard-alloc', 'no-such-file'], { cwd }),
      1,
    );
  });

  test("an option Vitest refuses: Vitest's own error and exit 1, no word about a missing guardAlloc() plugin", async () => {
    const { guarded } = await assertSameAsPlain(
      () => node(VITEST, ['run', '--bogus-flag'], { cwd }),
      () => node(MATE_VITEST, ['run', '--guard-alloc', '--bogus-flag'], { cwd }),
      1,
    );
    assert.match(guarded.output, /CACError: Unknown option `--bogusFlag`/);
    assert.doesNotMatch(guarded.output, /\[mate-guard\]|had no effect|guardAlloc\(\) plugin/);
  });
});

describe('mate-mocha', () => {
  const cwd = path.join(FIX, 'mocha');
  test('a spec that matches no file: mocha\'s "No test files found" and its exit 1', async () => {
    const { guarded } = await assertSameAsPlain(
      () => run(path.join(BIN, 'mocha'), ['no-such-dir/*.spec.cjs'], { cwd }),
      () => node(MATE_MOCHA, ['--guard-alloc', 'no-such-dir/*.spec.cjs'], { cwd }),
      1,
    );
    assert.match(guarded.output, /No test files found/);
  });
});
