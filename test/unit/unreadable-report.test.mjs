// Why a report file could not be read (report/unreadable.ts): a file cut
// short is said so wherever the cut falls, not only where JSON.parse says
// "end of JSON input" (a cut right after a comma reads as a missing key).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { unreadableWhy } = await import(path.join(ROOT, 'packages/core-native/dist/report/unreadable.js'));

function why(text) {
  try {
    JSON.parse(text);
  } catch (err) {
    return unreadableWhy(err, text);
  }
  throw new Error(`parsed: ${text}`);
}

test('a report cut anywhere is "cut short": inside a value, after a colon, after a comma, inside a key', () => {
  const report = JSON.stringify({ kind: 'canary-corruption', allocation: { id: 7, size: 13 }, test: 'a > b' }, null, 2);
  for (let n = 1; n < report.length; n++) {
    const cut = report.slice(0, n);
    if (cut.trim() === '') continue;
    assert.match(why(cut), /^cut short \(/, JSON.stringify(cut));
  }
});

test('text that is not JSON, or has more after it, is "not JSON"; an empty file is said so', () => {
  assert.match(why('{"a" 1}'), /^not JSON \(/);
  assert.match(why('{"a":1}x'), /^not JSON \(/);
  assert.match(why('<html>'), /^not JSON \(/);
  assert.equal(why('  \n'), 'the file is empty');
});
