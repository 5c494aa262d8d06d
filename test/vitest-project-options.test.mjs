// Vitest projects that each load the plugin with options of their own: each
// project's workers guard with that project's options, not with those of
// whichever project started the run. The same file runs in a `head` and a
// `tail` project (test/fixtures/vitest/projects-options): its one-byte
// underflow faults in the head project and is a damaged canary in the tail one.
// `mate replay` of such a run replays each project with its own recorded settings.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { MATE, reportOf, ROOT, run } from './helpers/run.mjs';

const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const cwd = path.join(ROOT, 'test', 'fixtures', 'vitest', 'projects-options');
const mateVitest = (args, env) => run(process.execPath, [MATE_VITEST, 'run', ...args], { cwd, env, timeout: 90_000 });

/** One recorded run of both projects (its report directory), shared by the replay tests. */
let recording;
function recordedRun() {
  recording ??= (async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-project-replay-'));
    const rec = await mateVitest(['--guard-alloc', '--no-guard-rerun', '--guard-report-dir', parent]);
    assert.equal(rec.code, 1, rec.output);
    const dirs = fs.readdirSync(parent);
    assert.equal(dirs.length, 1, rec.output);
    return path.join(parent, dirs[0]);
  })();
  return recording;
}

describe('per-project plugin options', () => {
  test("each project's plugin mode applies to that project only: head faults, tail reports the canary", async () => {
    const r = await mateVitest(['--guard-alloc', '--no-guard-rerun']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /^\[mate-guard\] guarding on: mode head \(project head\), tail \(project tail\)$/m);
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-underflow'),
      /1 byte before the start of allocation #\d+ \(64 bytes, head mode\)\n==mate-guard== test: \[head\] underflow\.test\.mjs > reverseFill underflows by one/,
    );
    assert.match(
      reportOf(r.output, 'ERROR: canary-corruption'),
      /1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged\n==mate-guard== test: \[tail\] underflow\.test\.mjs > reverseFill underflows by one/,
    );
    // Every fault is the head project's (Vitest repeats a failed test's report: each copy is checked).
    const faults = r.output.split('\n').filter((l) => /ERROR: heap-buffer-underflow/.test(l));
    assert.ok(faults.length > 0 && faults.every((l) => /\(64 bytes, head mode\)$/.test(l)), faults.join('\n'));
    assert.match(r.output, /Test Files +2 failed \(2\)/);
    assert.match(r.output, /\[mate-guard\] summary: .* 2 violations, 1 process died,/);
  });

  test("a flag still ranks above every project's options: --guard-mode tail guards both projects in tail mode", async () => {
    const r = await mateVitest(['--guard-alloc', '--guard-mode', 'tail', '--no-guard-rerun']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /^\[mate-guard\] guarding on: mode tail$/m);
    assert.doesNotMatch(r.output, /heap-buffer-underflow/);
    for (const project of ['head', 'tail']) {
      assert.match(
        r.output,
        new RegExp(
          `ERROR: canary-corruption: 1 byte before the start of allocation #\\d+ \\(64 bytes, tail mode\\) damaged\\n==mate-guard== test: \\[${project}\\] underflow`,
        ),
      );
    }
    assert.match(r.output, /\[mate-guard\] summary: .* 2 violations, 0 tests skipped by tag\n/);
    assert.doesNotMatch(r.output, /died/);
  });

  test('mate replay of the run replays each project with its own recorded settings: head faults, tail reports the canary', async () => {
    const dir = await recordedRun();
    const record = JSON.parse(fs.readFileSync(path.join(dir, 'replay.json'), 'utf8'));
    assert.deepEqual(Object.fromEntries(Object.entries(record.projects).map(([name, s]) => [name, s.mode])), {
      head: 'head',
      tail: 'tail',
    });
    const r = await run(process.execPath, [MATE, 'replay', dir], { cwd, timeout: 90_000 });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stderr,
      /^\[mate-guard\] replaying tests \[head\] underflow\.test\.mjs > reverseFill underflows by one, \[tail\] underflow\.test\.mjs > reverseFill underflows by one \(vitest\) in mode head \(project head\), tail \(project tail\), alignment 16$/m,
    );
    assert.match(r.output, /^\[mate-guard\] guarding on: mode head \(project head\), tail \(project tail\)$/m);
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-underflow'),
      /\(64 bytes, head mode\)\n==mate-guard== test: \[head\] underflow\.test\.mjs > reverseFill underflows by one/,
    );
    assert.match(
      reportOf(r.output, 'ERROR: canary-corruption'),
      /\(64 bytes, tail mode\) damaged\n==mate-guard== test: \[tail\] underflow\.test\.mjs > reverseFill underflows by one/,
    );
  });

  test('mate replay --guard-mode tail still chooses one mode for every project', async () => {
    const dir = await recordedRun();
    const r = await run(process.execPath, [MATE, 'replay', dir, '--guard-mode', 'tail'], { cwd, timeout: 90_000 });
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /\(vitest\) in tail mode, alignment 16$/m);
    assert.doesNotMatch(r.output, /heap-buffer-underflow/);
    for (const project of ['head', 'tail'])
      assert.match(
        r.output,
        new RegExp(`\\(64 bytes, tail mode\\) damaged\\n==mate-guard== test: \\[${project}\\] underflow`),
      );
  });
});
