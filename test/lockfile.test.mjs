// The committed package-lock.json is the one `npm install` writes: a fresh
// clone must not start with a modified lock (it did: npm added 222 lines
// of optional platform packages the committed lock lacked). npm resolves
// the lock from the manifests alone (`--package-lock-only`), so the check
// runs on a copy of them, in about a second, without touching node_modules.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { ROOT, run } from './helpers/run.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-lock-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function copy(rel) {
  fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
  fs.copyFileSync(path.join(ROOT, rel), path.join(tmp, rel));
}

/** The workspace folders: plain paths, and `dir/*` patterns expanded. */
function workspaceDirs(patterns) {
  return patterns.flatMap((ws) => {
    if (!ws.endsWith('/*')) return [ws];
    const dir = ws.slice(0, -2);
    return fs
      .readdirSync(path.join(ROOT, dir))
      .map((d) => path.join(dir, d))
      .filter((d) => fs.existsSync(path.join(ROOT, d, 'package.json')));
  });
}

test('npm install leaves the committed package-lock.json as it is', async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  copy('package.json');
  copy('package-lock.json');
  for (const ws of workspaceDirs(manifest.workspaces)) copy(path.join(ws, 'package.json'));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = await run(
    npm,
    ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
    { cwd: tmp },
  );
  assert.equal(r.code, 0, r.output);
  const committed = fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8');
  const written = fs.readFileSync(path.join(tmp, 'package-lock.json'), 'utf8');
  const lines = (s) => s.split('\n').length;
  assert.ok(
    written === committed,
    `npm install rewrites package-lock.json (${lines(committed)} -> ${lines(written)} lines): run npm install and commit package-lock.json`,
  );
});
