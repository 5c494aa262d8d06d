// Report files of the wrong shape (a forged CI artifact, a corrupted
// disk) never crash the merge: `mate report` names each file and the field
// that is wrong, counts it as a report that could not be read (exit 1) and
// still reports every good one.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
let good; // a real run's directory: one heap-buffer-overflow event

before(async () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-shapes-'));
  const r = await run(process.execPath, [
    MATE_MOCHA,
    '--guard-alloc',
    '--guard-report-dir',
    parent,
    'examples/mocha/overflow.spec.cjs',
  ]);
  assert.equal(r.code, 139, r.output);
  good = path.join(parent, fs.readdirSync(parent)[0]);
});

test('test: 5, frames: "abc", 100,000-level nesting in damage and a 200 MB event: each named with its field, exit 1, the good report kept', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-shapes-forged-'));
  fs.cpSync(good, dir, { recursive: true });
  const [real] = fs.readdirSync(dir).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
  const event = JSON.parse(fs.readFileSync(path.join(dir, real), 'utf8'));
  const write = (n, text) => fs.writeFileSync(path.join(dir, `mate-guard-9${n}-1.json`), text);
  write(1, JSON.stringify({ ...event, test: 5 }));
  write(2, JSON.stringify({ ...event, accessStack: { unwind: 'pc-only', frames: 'abc' } }));
  write(3, `{"tool":"mate-guard","kind":"canary-corruption","damage":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
  write(4, JSON.stringify({ ...event, allocation: { ...event.allocation, slot: { data: [1, {}] } } }));
  // 200 MB, sparse: the reader must not load it to find out.
  fs.writeFileSync(path.join(dir, 'mate-guard-95-1.json'), '{"tool":"mate-guard","kind":"x","text":"');
  fs.truncateSync(path.join(dir, 'mate-guard-95-1.json'), 200 * 1024 * 1024);
  fs.writeFileSync(
    path.join(dir, 'stats-96-0.json'),
    JSON.stringify({ pid: 96, fallbacks: 1, fallbackReasons: { x: 'abc' } }),
  );

  const r = await run(process.execPath, [MATE, 'report', dir]);
  assert.equal(r.code, 1, r.output);
  assert.doesNotMatch(r.output, /TypeError|RangeError|at .*\.js:\d+/, 'no stack trace');
  const says = (n, why) =>
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] error: cannot read report file ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/mate-guard-9${n}-1\\.json: ${why}; counted as a violation that could not be read$`,
        'm',
      ),
    );
  says(1, 'test is a number, not a string');
  says(2, 'accessStack\\.frames is a string, not an array');
  says(3, 'nested more than 32 levels deep');
  says(4, 'allocation\\.slot\\.data\\[1\\] is an object, not an address');
  says(5, '209715200 bytes, more than any report \\(16777216 at most\\)');
  assert.match(
    r.stderr,
    /warning: cannot read counters file .*stats-96-0\.json: fallbackReasons\.x is a string, not a number;/,
  );
  // The good report is still there.
  assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow/);
  assert.match(r.output, /\[mate-guard\] summary: .*6 violations/);
});
