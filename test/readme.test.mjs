// README's option tables are generated from the tables the parsers use:
// this keeps them from drifting.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const between = (text, name) => {
  const m = new RegExp(`<!-- ${name}:start[^>]*-->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(text);
  assert.ok(m, `README has the ${name} markers`);
  return m[1];
};

test('README option and settings tables are what `mate options` prints', async () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const r = await run(process.execPath, [MATE, 'options']);
  assert.equal(r.code, 0, r.output);
  assert.ok(r.stdout.includes(between(readme, 'allocator-options')), 'allocator options table is current (paste `mate options`)');
  assert.ok(r.stdout.includes(between(readme, 'runner-settings')), 'runner settings table is current (paste `mate options`)');
});
