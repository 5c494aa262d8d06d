// A runner outside its package's supported range (peerDependencies) is
// refused in one line with exit 2 when guarding is asked for, never guarded
// half-way: Mocha 5.2 loads no root-hook plugin, so a guarded run there
// reported a use-after-free with no `test:` line and no word why. The
// real Mocha 5.2.0 is the test/fixtures/mocha-5 workspace's.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { ROOT, run } from './helpers/run.mjs';

const MOCHA_5_DIR = path.join(ROOT, 'test', 'fixtures', 'mocha-5');
const MOCHA_5 = path.join(MOCHA_5_DIR, 'node_modules', 'mocha', 'bin', 'mocha');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'mocha');
const UAF = 'fault/use-after-free.spec.cjs';
const REFUSAL = (program) =>
  `${program}: mocha 5.2.0 is not supported by @mate-guard/mocha (it needs mocha >=10): it loads no root-hook plugin (mochaHooks, Mocha 8), ` +
  'so no test would be bracketed: reports would name no test and damage found after a test would fail none; use a supported mocha, or run it without mate-guard\n';
const mocha5 = (args, env) => run(process.execPath, [MOCHA_5, ...args], { cwd: FIXTURES, env });

describe('Mocha 5.2 (below the supported >=10)', () => {
  test('plugin asked to guard (MATE_MOCHA_GUARD_ALLOC, or --guard-alloc after --): refused in one line, exit 2, before any test', async () => {
    for (const [args, env] of [
      [['--require', '@mate-guard/mocha', UAF], { MATE_MOCHA_GUARD_ALLOC: '1' }],
      [['--require', '@mate-guard/mocha', UAF, '--', '--guard-alloc'], {}],
    ]) {
      const r = await mocha5(args, env);
      assert.equal(r.code, 2, r.output);
      assert.equal(r.stderr, REFUSAL('mate-guard'));
      assert.doesNotMatch(r.output, /passing|failing|==mate-guard==/);
    }
  });

  test('the filed command (--guard-alloc as a Mocha flag): Mocha 5 refuses the flag itself, so nothing runs unguarded in silence', async () => {
    const r = await mocha5(['--require', '@mate-guard/mocha', '--guard-alloc', UAF]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /unknown option `--guard-alloc'/);
    assert.doesNotMatch(r.output, /passing|failing/);
  });

  test('plugin loaded with guarding off: Mocha 5 runs as without it (loading it makes guarding available, not active)', async () => {
    const r = await mocha5(['--require', '@mate-guard/mocha', 'clean/clean.spec.cjs']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /\d+ passing/);
    assert.doesNotMatch(r.output, /mate-guard/);
  });

  test('mate-mocha in a project on Mocha 5.2: refused in one line, exit 2 (not run with another Mocha)', async () => {
    const r = await run(process.execPath, [MATE_MOCHA, '--guard-alloc', path.join(FIXTURES, UAF)], {
      cwd: MOCHA_5_DIR,
    });
    assert.equal(r.code, 2, r.output);
    assert.equal(r.stderr, REFUSAL('mate-mocha'));
    assert.equal(r.stdout, '');
  });
});
