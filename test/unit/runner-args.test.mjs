// Which runner arguments ask for watch mode or a shard (runner-args.ts):
// what the mate-* CLIs, their reruns and `mate replay` read and drop.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const {
  NODE_ARGS,
  watchRequested: watchOf,
  withoutWatchAndShards: without,
} = await import(path.join(ROOT, 'packages/core-native/dist/run/runner-args.js'));
// Each runner's words come from its own package (its selection), node's from core.
const ARGS = {
  jest: (await import(path.join(ROOT, 'packages/jest-env/dist/selection.js'))).default.selection.args,
  vitest: (await import(path.join(ROOT, 'packages/vitest-plugin/dist/selection.mjs'))).selection.args,
  mocha: (await import(path.join(ROOT, 'packages/mocha-plugin/dist/selection.js'))).default.selection.args,
  'node-test': (await import(path.join(ROOT, 'packages/node-test/dist/selection.js'))).default.selection.args,
  node: NODE_ARGS,
};
const watchRequested = (runner, args) => watchOf(ARGS[runner], args);
const withoutWatchAndShards = (runner, args, keep) => without(ARGS[runner], args, keep);

test('Jest: --watchAll=false, --watch false and --no-watch are not watch mode; -w is the worker count', () => {
  assert.equal(watchRequested('jest', ['--watchAll=false', '--ci']), false);
  assert.equal(watchRequested('jest', ['--watch', 'false']), false);
  assert.equal(watchRequested('jest', ['--watch', '--no-watch']), false);
  assert.equal(watchRequested('jest', ['-w', '2']), false);
  assert.equal(watchRequested('jest', ['--watchAll']), true);
  assert.equal(watchRequested('jest', ['--watch-all=true']), true);
  assert.equal(watchRequested('jest', ['--no-watch', '--watch']), true, 'the last word wins');
});

test("Vitest, Mocha, node: -w/--watch and their false forms; node's --watch-path; nothing after --", () => {
  assert.equal(watchRequested('vitest', ['-w']), true);
  assert.equal(watchRequested('vitest', ['--watch=false']), false);
  assert.equal(watchRequested('mocha', ['--watch=false']), false);
  assert.equal(watchRequested('mocha', ['--watch-files', 'src']), false, '--watch-files only configures watch mode');
  assert.equal(watchRequested('node-test', ['--watch-path=src']), true);
  assert.equal(watchRequested('node-test', ['--', '--watch']), false);
});

test('dropped for a narrowed run: watch flags and shards with their values; worker counts stay with theirs', () => {
  assert.deepEqual(
    withoutWatchAndShards('jest', [
      '--shard=2/3',
      '-w',
      '2',
      '--watchAll',
      'false',
      '--shard',
      '1/3',
      '--maxWorkers=50%',
      'a.test.js',
    ]),
    ['-w', '2', '--maxWorkers=50%', 'a.test.js'],
  );
  assert.deepEqual(
    withoutWatchAndShards('vitest', ['run', '--shard', '2/2', '-w', 'x', '--', '--guard-alloc', '--shard=1/2']),
    ['run', 'x', '--', '--guard-alloc', '--shard=1/2'],
  );
  assert.deepEqual(
    withoutWatchAndShards('node-test', ['--test-shard=1/2', '--watch-path', 'src', '--test-concurrency=2']),
    ['--test-concurrency=2'],
  );
  assert.deepEqual(withoutWatchAndShards('node', ['--watch', '--expose-gc']), ['--expose-gc']);
  assert.deepEqual(
    withoutWatchAndShards('jest', ['--shard=2/3', '--watch'], true),
    ['--shard=2/3'],
    'the whole command keeps its shard',
  );
});
