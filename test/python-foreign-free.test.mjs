// The native heap's foreign quarantine under pytest: a Python extension
// (test/fixtures/python-foreign/_fext.c) frees the line getline allocated
// inside libc and then writes it. Plain pytest: both tests pass. With the
// extension's heap chosen: the writing test fails with heap-use-after-free
// on WRITE, the free's site in the extension; the clean one passes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildExtension, noExtensionBuild, noLibrary } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'python-foreign');

function why() {
  try {
    execFileSync('python3', ['-c', 'import pytest'], { stdio: 'ignore' });
  } catch {
    return 'no python3 with pytest';
  }
  return noExtensionBuild() || noLibrary();
}

describe('pytest: a write after an extension frees memory libc allocated', { skip: why() }, () => {
  let dir;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-foreign-'));
    buildExtension(path.join(FIX, '_fext.c'), dir, '_fext');
    fs.copyFileSync(path.join(FIX, 'test_foreign.py'), path.join(dir, 'test_foreign.py'));
  });
  const pytest = (args) =>
    run('python3', ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfs', ...args], {
      cwd: dir,
      timeout: 120_000,
      env: {
        PYTHONPATH: `${path.join(ROOT, 'packages', 'python')}:${dir}`,
        MATE_GUARD_CUDA_DRIVER: path.join(dir, 'no-such-libcuda.so.1'),
        MATE_PYTEST_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-foreign-reports-')),
      },
    });

  test('plain pytest: the write after free is silent, both tests pass', async () => {
    const r = await pytest([]);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stdout, /2 passed/);
    assert.ok(!r.output.includes('==mate-guard=='), r.output);
  });

  test('--guard-alloc --guard-native: the writing test fails with the free in the extension, the clean one passes, exit 1', async () => {
    const r = await pytest(['-p', 'mate_guard.pytest_plugin', '--guard-alloc', '--guard-native', '*_fext*.so']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /1 failed, 1 passed/);
    assert.match(
      r.output,
      /^(?:.*)==mate-guard== ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset \d+ inside a freed block of \d+ bytes that mate-guard did not allocate\n==mate-guard== test: test_foreign\.py::test_free_then_write\n/m,
    );
    const src = fs.readFileSync(path.join(FIX, '_fext.c'), 'utf8').split('\n');
    const m = /^==mate-guard== freed at:\n==mate-guard== {3}#0 free_then_write \S*_fext\.c:(\d+) /m.exec(r.output);
    assert.ok(m, r.output);
    assert.match(src[Number(m[1]) - 1], /free\(line\)/, `_fext.c:${m[1]} is the free`);
    assert.match(r.stdout, /FAILED test_foreign\.py::test_free_then_write/);
  });
});
