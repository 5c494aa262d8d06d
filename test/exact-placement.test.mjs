// exactPlacement (on by default): JS buffers with 1-byte elements placed
// byte-exact (their last byte against the guard page), so a native read 1-3 bytes past a
// Buffer (a truncated UTF-8 lead byte at its end) faults at the read
// instead of landing in the alignment gap, where reads damage no canary.
// Wider typed arrays keep the alignment.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { buildSharedObject, cCompiler } from './helpers/compile.mjs';
import { BIN, ROOT, guardRun, reportLines, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'exact-placement');

const skip = cCompiler() ? false : 'no C compiler on PATH';

const addon = () =>
  buildSharedObject(cCompiler(), path.join(FIX, 'build', 'utf8_tail.node'), [path.join(FIX, 'utf8_tail.c')], {
    flags: ['-O1', '-g'],
  });

describe('a native read 1-3 bytes past a Buffer (node:test, mate-node-test)', { skip }, () => {
  const go = (flags) =>
    run(path.join(BIN, 'mate-node-test'), ['--guard-alloc', ...flags, '--test-reporter=spec', 'utf8.test.cjs'], {
      cwd: FIX,
      env: { UTF8_TAIL_ADDON: addon() },
    });

  test('--no-guard-exact-placement: it lands in the alignment gap: the test passes, nothing is reported', async () => {
    const r = await go(['--no-guard-exact-placement']);
    assert.equal(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /==mate-guard== ERROR/);
  });

  test('by default (exact placement on): heap-buffer-overflow on READ 1 byte past the end, at the read, and the test fails', async () => {
    const r = await go([]);
    assert.notEqual(r.code, 0, r.output);
    const lines = reportLines(r.output);
    assert.match(
      lines[0] ?? '',
      /^==mate-guard== ERROR: heap-buffer-overflow on READ at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(13 bytes, tail mode\)$/,
      r.output,
    );
    assert.match(
      r.output,
      /^==mate-guard== {3}#0 CountCodePoints \S*utf8_tail\.c:21 \(utf8_tail\.node\+0x[0-9a-f]+\)$/m,
    );
    assert.match(r.output, /^==mate-guard== allocation #\d+: 13 bytes at .*, tail mode, alignment 1, backend host/m);
    assert.ok(
      r.output.includes('==mate-guard== test: utf8.test.cjs > counts the code points of a name cut short\n'),
      r.output,
    );
  });
});

test('exactPlacement (the default) places 1-byte-element buffers byte-exact and leaves wider typed arrays aligned', async () => {
  const script = 'new Uint8Array(13); Buffer.alloc(13); new Float64Array(3); new ArrayBuffer(13);';
  const r = await guardRun(['--log-allocations'], ['-e', script]);
  assert.equal(r.code, 0, r.output);
  const ptrs = [...r.stderr.matchAll(/^\[mate-guard\] alloc #\d+ ptr=0x([0-9a-f]+) requested=(\d+) /gm)].map((m) => [
    Number(BigInt(`0x${m[1]}`) % 16n),
    Number(m[2]),
  ]);
  assert.deepEqual(
    ptrs,
    [
      [3, 13],
      [3, 13],
      [0, 24],
      [0, 13],
    ],
    r.stderr,
  );
});

test('--no-exact-placement keeps every JS buffer at the alignment (16)', async () => {
  const script = 'new Uint8Array(13); Buffer.alloc(13);';
  const r = await guardRun(['--no-exact-placement', '--log-allocations'], ['-e', script]);
  assert.equal(r.code, 0, r.output);
  const mods = [...r.stderr.matchAll(/^\[mate-guard\] alloc #\d+ ptr=0x([0-9a-f]+) requested=13 /gm)].map((m) =>
    Number(BigInt(`0x${m[1]}`) % 16n),
  );
  assert.deepEqual(mods, [0, 0], r.stderr);
});
