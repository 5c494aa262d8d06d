// The summary's site-aware sampling line, for the cases a run on the
// example addon does not reach: a site whose first call got no slot, a
// full site table, several processes. (A real run's line:
// test/native-heap-site-sampling.test.mjs.)
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { addNativeSites, formatNativeSites } = await import(
  path.join(ROOT, 'packages/core-native/dist/run/native-sites.js')
);
const proc = (o) => ({
  first: 8,
  seen: 0,
  reachedFirst: 0,
  missed: 0,
  forced: 0,
  untrackedCalls: 0,
  capacity: 16384,
  ...o,
});
const line = (...procs) => formatNativeSites(procs.reduce((s, p) => addNativeSites(s, proc(p)), undefined));

test('every site called K times or more: "all guarded at least K times"', () => {
  assert.equal(
    line({ seen: 12, reachedFirst: 12 }),
    '[mate-guard] native heap: 12 call sites, all guarded at least 8 times\n',
  );
});

test('sites called fewer than K times are covered too: guarded on every call', () => {
  assert.equal(
    line({ seen: 105, reachedFirst: 53 }),
    '[mate-guard] native heap: 105 call sites, all covered: 53 guarded at least 8 times, 52 on every call (called fewer times)\n',
  );
});

test('no site reached K calls: all guarded on every call', () => {
  assert.equal(
    line({ seen: 36 }),
    '[mate-guard] native heap: 36 call sites, all guarded on every call (each called fewer than 8 times)\n',
  );
});

test('a site one of whose first K calls got no slot is not covered, and the line says so', () => {
  assert.equal(
    line({ seen: 10, reachedFirst: 10, missed: 1 }),
    '[mate-guard] native heap: 10 call sites, 9 covered (guarded at least 8 times, or on every call), 1 not (one of its first 8 calls got no guarded slot)\n',
  );
});

test('a full table: the calls of sites past it were sampled plainly, counted', () => {
  assert.equal(
    line({ seen: 16384, reachedFirst: 16384, untrackedCalls: 5000 }),
    '[mate-guard] native heap: 16384 call sites, all guarded at least 8 times; the site table was full: 5000 calls from sites past it were sampled plainly\n',
  );
});

test('several processes: summed, said to be counted in each; a process whose modules never allocated counts nothing', () => {
  assert.equal(
    line({ seen: 5, reachedFirst: 5 }, { seen: 7, reachedFirst: 7 }, {}),
    '[mate-guard] native heap: 12 call sites, all guarded at least 8 times (counted in each of 2 processes)\n',
  );
});

test('site-aware sampling off everywhere: no line', () => {
  assert.equal(formatNativeSites(undefined), '');
  assert.equal(line({}), '');
});
