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
  assert.ok(
    r.stdout.includes(between(readme, 'allocator-options')),
    'allocator options table is current (paste `mate options`)',
  );
  assert.ok(
    r.stdout.includes(between(readme, 'runner-settings')),
    'runner settings table is current (paste `mate options`)',
  );
});

// Each runner package's README: its settings table is the one `mate options
// --runner <name>` prints (every setting, --guard-native and the CUDA rows
// included, in that runner's spellings), and it never says again that the
// native heap or CUDA memory are not guarded (both are: main README).
const PACKAGE_READMES = { vitest: 'vitest-plugin', jest: 'jest-env', mocha: 'mocha-plugin', 'node-test': 'node-test' };

for (const [runner, dir] of Object.entries(PACKAGE_READMES)) {
  test(`packages/${dir}/README.md: the settings table is \`mate options --runner ${runner}\`; no claim that native or CUDA memory is not guarded`, async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'packages', dir, 'README.md'), 'utf8');
    const r = await run(process.execPath, [MATE, 'options', '--runner', runner]);
    assert.equal(r.code, 0, r.output);
    assert.equal(
      between(readme, `runner-settings:${runner}`),
      r.stdout,
      `paste \`mate options --runner ${runner}\` between the markers`,
    );
    assert.match(r.stdout, /`--guard-native <glob>`/);
    assert.doesNotMatch(readme, /only JS-created buffers are guarded/i);
    assert.doesNotMatch(readme, /(native|malloc|CUDA)[^.\n]*\bnot (covered|guarded)\b/i);
  });
}
