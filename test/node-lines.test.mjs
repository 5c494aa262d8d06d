// The newer Node release lines (`engines: node >=20`; this machine's Node is
// the oldest): the demo, every planted bug under every runner and `mate
// guard-run`, run with each line's Node first on PATH, so each runner's
// `#!/usr/bin/env node` and each `node` the demo starts is that line's.
// Node 22 made an Error's `stack` an accessor, and node:test's crashed-test
// attribution then failed to serialize its error: caught by this tier, not by
// the rest of the suite on Node 20. Needs the Nodes that
// scripts/install-node-lines.sh unpacks (CI runs it); skipped, saying so,
// where they are missing.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { ROOT, run } from './helpers/run.mjs';

const LINES = path.join(ROOT, '.node-lines');
const DEMO = path.join(ROOT, 'examples', 'demo.mjs');
const lines = fs.existsSync(LINES)
  ? fs
      .readdirSync(LINES)
      .filter((d) => fs.existsSync(path.join(LINES, d, 'bin', 'node')))
      .sort((a, b) => Number(a) - Number(b))
  : [];

if (lines.length === 0) {
  test('the newer Node lines', {
    skip: 'skipped: no Node in .node-lines/ (bash scripts/install-node-lines.sh fetches them from the npm registry)',
  }, () => {});
} else {
  describe('the demo under each newer Node line', { timeout: 40 * 60_000 }, () => {
    for (const major of lines) {
      const bin = path.join(LINES, major, 'bin');
      const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}` };
      test(`Node ${major}: every planted bug is caught and reported, under each runner and mate guard-run`, async () => {
        const version = await run('node', ['-p', 'process.version'], { env });
        assert.match(version.stdout, new RegExp(`^v${major}\\.`), `node on PATH is not Node ${major}`);
        const r = await run(path.join(bin, 'node'), [DEMO], { env, timeout: 15 * 60_000 });
        const results = r.output.slice(r.output.lastIndexOf('######## demo results'));
        const failed = results.split('\n').filter((l) => l.startsWith('FAIL '));
        assert.deepEqual(failed, [], `the demo under Node ${version.stdout.trim()} failed:\n${failed.join('\n')}`);
        assert.equal(r.code, 0, r.output.slice(-4000));
        assert.match(r.output, /^\d{2,} passed, 0 failed$/m);
      });
    }
  });
}
