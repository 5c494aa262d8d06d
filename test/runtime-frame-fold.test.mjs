// The frame rule on a real over-read inside node: an addon passes
// napi_create_string_utf8 a length past the end of a guarded buffer
// (examples/addon ExtractStrings), node's UTF-8 decoder faults several of
// node's own frames below it. The report shows #0, folds node's frames in
// one line that says what it hides, and shows the addon's frame (the one to
// fix, and the one the suppression line names) with its source line.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';

import { buggyLine } from './helpers/native-frames.mjs';
import { ROOT, guardRun, reportLines } from './helpers/run.mjs';

const SIGSEGV_EXIT = 139;

test("an over-read inside node by napi_create_string_utf8: node's frames folded, the addon's ExtractStrings shown at its line", async () => {
  const r = await guardRun([], [path.join(ROOT, 'test', 'fixtures', 'core', 'extract-strings.js')]);
  assert.equal(r.code, SIGSEGV_EXIT, r.output);
  assert.doesNotMatch(r.output, /not reached/);
  const lines = reportLines(r.output);
  assert.match(
    lines[0],
    /^==mate-guard== ERROR: heap-buffer-overflow on READ at 0x[0-9a-f]+: \d+ bytes? past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
  );
  const access = lines
    .slice(lines.indexOf('==mate-guard== access:') + 1)
    .filter((l) => l.startsWith('==mate-guard==   '));
  assert.match(access[0], /^==mate-guard== {3}#0 \S.* \(node\+0x[0-9a-f]+\)$/, 'frame #0 is the read inside node');
  const fold =
    /^==mate-guard== {3}… (\d+) frames? in the runtime folded \(#1 to #(\d+), in node; #(\d+) called napi_create_string_utf8\)$/.exec(
      access[1],
    );
  assert.ok(fold, `the second line folds node's frames and says what it hides:\n${access.join('\n')}`);
  const [, count, lastFolded, caller] = fold.map(Number);
  assert.equal(count, lastFolded, 'it counts the frames it names');
  assert.equal(caller, lastFolded + 1);
  const line = buggyLine('napi_create_string_utf8(info.Env()');
  assert.match(
    access[2],
    new RegExp(
      `^==mate-guard== {3}#${caller} ExtractStrings \\S*examples/addon/src/buggy\\.cc:${line} \\(buggy_addon\\.node\\+0x[0-9a-f]+\\)$`,
    ),
    access.join('\n'),
  );
  assert.ok(
    lines.includes(
      '==mate-guard== suppression: heap-buffer-overflow function=ExtractStrings test="spec/strings.test.js > strings > extractStrings"',
    ),
    lines.join('\n'),
  );
});
