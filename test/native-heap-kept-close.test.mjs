// How a freed one-page native allocation's kept slot is closed (keptClose,
// MATE_GUARD_KEPT_CLOSE): by mprotect (the page stays) or by a guard marker
// (the page is given back and comes back zero). Either way a reused slot is
// canary again around its new allocation: two threads' 20,000 pairs reuse
// every kept slot twice without a report, and then an underflow into the
// canary of a reused slot is found at its free. Auto picks markers only
// while native allocations come from threads in turn.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { guardRun, reportLines, ROOT } from './helpers/run.mjs';

const script = (threads) => `
const addon = require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))});
const core = require(${JSON.stringify(path.join(ROOT, 'packages', 'core-native'))});
addon.nativeHeap.churnThreads(${threads}, 10000, 64);
const s = core.stats();
console.log(JSON.stringify({ markers: s.nativeKeptMarkerCloses, mprotect: s.nativeKeptMprotectCloses, violations: s.violations }));
addon.nativeHeap.mallocUnderflow();
console.log('underflow: returned');`;

async function churnThenUnderflow(threads, close) {
  const r = await guardRun(['--no-rerun', '--native', '*buggy_addon.node'], ['-e', script(threads)], {
    env: close ? { MATE_GUARD_KEPT_CLOSE: close } : {},
  });
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /underflow: returned/);
  const errors = reportLines(r.output).filter((l) => l.includes(' ERROR: '));
  assert.equal(errors.length, 1, r.output);
  assert.match(
    errors[0],
    /ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
  );
  const counts = JSON.parse(r.output.split('\n').find((l) => l.startsWith('{')));
  assert.equal(counts.violations, 0, r.output);
  assert.ok(counts.markers + counts.mprotect >= threads * 10000, `every kept-slot free closed its slot: ${r.output}`);
  return counts;
}

test("kept slots closed by guard markers come back canary around the new allocation: no false report, a reused slot's underflow found", async () => {
  const c = await churnThenUnderflow(2, 'markers');
  assert.equal(c.mprotect, 0);
});

test('kept slots closed by mprotect (forced) use no guard markers, and find the same underflow', async () => {
  const c = await churnThenUnderflow(2, 'mprotect');
  assert.equal(c.markers, 0);
});

test('auto closes by mprotect while one thread allocates', async () => {
  const c = await churnThenUnderflow(1, undefined);
  assert.equal(c.markers, 0);
});

test('a kept-slot close that is not auto, mprotect or markers is refused by name', async () => {
  const r = await guardRun(['--native', '*buggy_addon.node'], ['-e', '0'], {
    env: { MATE_GUARD_KEPT_CLOSE: 'sometimes' },
  });
  assert.notEqual(r.code, 0);
  assert.match(
    r.output,
    /MATE_GUARD_KEPT_CLOSE: "sometimes" is not a kept-slot close; use auto or mprotect or markers/,
  );
});
