// The escaping module every CLI prints artifact text through: a terminal
// is shown what the text holds, never obeys it, and a command is printed
// so that bash reads back exactly what replay runs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { visible, shellWord, shellLine } = await import(path.join(ROOT, 'packages/core-native/dist/text/escape.js'));

const HOSTILE = [
  'plain',
  'with space',
  "it's",
  'a\\b',
  '\x1b[2K',
  '\x1b]0;title\x07',
  'x\x9b2J',
  'right\u202eleft',
  'line\nnext',
  'tab\there',
  "mix'\x1b\\\n",
  '$(touch /tmp/x)',
  '`id`',
  '--flag=a,b',
  '',
  'é ü 中',
];

test('visible: every control character, C1 code and bidi override is spelled out; other text is kept', () => {
  for (const s of HOSTILE)
    assert.doesNotMatch(visible(s), /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/, JSON.stringify(s));
  assert.equal(visible('a\x1b[31mb'), 'a\\x1b[31mb');
  assert.equal(visible('r\u202el'), 'r\\u202el');
  assert.equal(visible('é ü 中 $(x)'), 'é ü 中 $(x)');
});

test('shellWord: bash reads back exactly the argument, whatever it holds; the printed line holds no control character', () => {
  for (const s of HOSTILE) {
    const word = shellWord(s);
    assert.doesNotMatch(word, /[\x00-\x1f\x7f-\x9f\u202a-\u202e]/, JSON.stringify(s));
    assert.equal(
      execFileSync('bash', ['-c', `printf %s ${word}`], { encoding: 'utf8' }),
      s,
      `${JSON.stringify(s)} as ${word}`,
    );
  }
  assert.equal(shellLine(['node', '--title', 'x\x1b[8m']), "node --title $'x\\x1b[8m'");
});
