// The Python package from the user's side: the wheel (built without Node)
// served from a PEP 503 simple index on the loopback (python -m http.server
// over a generated simple/ folder), pip-installed into a fresh virtual
// environment outside the checkout, then pytest --guard-alloc in a fresh
// project over the simulated CUDA driver.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { buildWheel, freshVenv, noPython, project } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';
import { buildFakeDriver, noGxx } from './helpers/sim.mjs';

const skip = noPython() || noGxx();
let server;
let port;
let fake;

before(async () => {
  if (skip) return;
  fake = buildFakeDriver('mate-sim-pip-');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-pyindex-'));
  const pkg = path.join(root, 'simple', 'mate-guard');
  fs.mkdirSync(pkg, { recursive: true });
  const wheel = buildWheel(pkg);
  const name = path.basename(wheel);
  fs.writeFileSync(
    path.join(root, 'simple', 'index.html'),
    '<!DOCTYPE html><html><body><a href="mate-guard/">mate-guard</a></body></html>\n',
  );
  fs.writeFileSync(
    path.join(pkg, 'index.html'),
    `<!DOCTYPE html><html><body><a href="${name}">${name}</a></body></html>\n`,
  );
  server = spawn('python3', ['-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', root], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the index server did not start in 20 s')), 20_000);
    server.stdout.on('data', (d) => {
      const m = /port (\d+)/.exec(String(d));
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    server.on('exit', (code) => reject(new Error(`the index server exited: ${code}`)));
  });
});

after(() => server?.kill());

test('pip installs mate-guard from a loopback package index into a fresh venv; pytest --guard-alloc in a fresh project names the overrunning test', {
  skip,
  timeout: 180_000,
}, async () => {
  const python = freshVenv('mate-pip-', ['--index-url', `http://127.0.0.1:${port}/simple`, 'mate-guard']);
  assert.ok(!python.startsWith(ROOT), 'the venv is outside the checkout');
  const show = await run(python, ['-m', 'pip', 'show', '-f', 'mate-guard'], { cwd: os.tmpdir() });
  assert.match(show.stdout, /^Name: mate-guard$/m);
  assert.match(show.stdout, /mate_guard\/_shipped\/libmate_guard_cuda\.so/);
  const cwd = project('mate-pip-project-', {
    'cabi.py': path.join(ROOT, 'test', 'fixtures', 'python', 'cabi.py'),
    'test_device.py': path.join(ROOT, 'test', 'fixtures', 'python', 'project', 'test_device.py'),
  });
  const r = await run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '--guard-alloc'], {
    cwd,
    env: { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake, MATE_PYTEST_GUARD_REPORT_DIR: cwd },
    timeout: 60_000,
  });
  assert.equal(r.code, 1, r.output);
  assert.match(r.stdout, /plugins: .*mate-guard-0\.1\.0/);
  assert.match(r.stdout, /^==mate-guard== test: test_device\.py::test_overrun$/m);
  assert.match(r.stdout, /^FAILED test_device\.py::test_overrun/m);
  assert.match(r.stdout, /^\[mate-guard\] summary: 4 allocations guarded, .* 1 violation, 3 tests skipped by tag$/m);
  // The library came from the wheel, not from the checkout.
  const where = await run(python, ['-c', 'import mate_guard._resources as r; print(r.library_path())'], {
    cwd: os.tmpdir(),
  });
  assert.match(where.stdout, /site-packages\/mate_guard\/_shipped\/libmate_guard_cuda\.so/);
});
