// A native allocation's JS stack inside a node:test test body (a microtask
// after an `await`) ends in async frames. Such a stack is not captured
// again for every call site of every microtask: its own frames' text from
// an earlier capture and the async tail of this microtask's first capture
// make its text, which must read exactly as a capture would.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { guardRun, ROOT } from './helpers/run.mjs';

const fixture = path.join(ROOT, 'test', 'fixtures', 'native-heap', 'async-stacks.mjs');

test('an allocation stack ending in async frames is put together without a capture and reads as the captured one', async () => {
  const r = await guardRun(['--no-rerun', '--native', '*buggy_addon.node'], ['--test', fixture]);
  assert.equal(r.code, 1, r.output);
  const counters = JSON.parse(/\[stack-keys\] (\{.*\})/.exec(r.output)?.[1] ?? 'null');
  assert.ok(counters && counters.composed >= 1, `a stack text was put together:\n${r.output}`);
  const dir = /\[mate-guard\] reports: (.+)/.exec(r.output)?.[1];
  assert.ok(dir, r.output);
  const events = fs
    .readdirSync(dir)
    .filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    .filter((e) => e.kind === 'canary-corruption')
    .sort((a, b) => a.allocation.id - b.allocation.id);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(events.length, 3, r.output);
  const stacks = events.map((e) => e.allocation.allocStack);
  for (const s of stacks) assert.match(s, /^ {4}at TestContext\.<anonymous> \(file:\/\/\S+async-stacks\.mjs:17:7\)\n/);
  // Rounds 2 and 3 run after an await: their texts end in the awaiting
  // chain. Round 3's was put together (round 2's was captured).
  assert.match(stacks[1], /\n {4}at async \S+/);
  assert.equal(stacks[2], stacks[1]);
});
