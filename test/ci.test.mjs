// CI: shards that keep their report directory (--guard-report-dir),
// `mate report` merging any number of them, violations in each runner's
// JUnit XML (crashed tests included), and suppressions.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

import { BIN, guardRun, MATE, reportLines, ROOT, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const MOCHA = path.join(BIN, 'mocha');
const SUPP = (name) => path.join(FIX, 'suppressions', name);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-ci-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const vitest = (fixture, args, env) =>
  run(process.execPath, [VITEST, ...args], { cwd: path.join(FIX, 'vitest', fixture), env });
const mateJest = (args, env) => run(process.execPath, [MATE_JEST, ...args], { env, timeout: 90_000 });
const mocha = (args, env) =>
  run(MOCHA, ['--require', '@mate-guard/mocha', ...args], { cwd: path.join(FIX, 'mocha'), env });
const mateReport = (dirs) => run(process.execPath, [MATE, 'report', ...dirs]);

function summaryOf(output) {
  const m =
    /^\[mate-guard\] summary: (\d+) allocations? guarded, peak live (\d+), (\d+) unguarded fallbacks?, (\d+) violations?, (?:(\d+) suppressed, )?(?:\d+ process(?:es)? died, )?(\d+) tests? skipped by tag$/m.exec(
      output,
    );
  assert.ok(m, `no summary line in:\n${output}`);
  return { allocations: +m[1], violations: +m[4], suppressed: +(m[5] ?? 0) };
}

const errors = (output) => reportLines(output).filter((l) => l.includes(' ERROR: '));

describe('shards keep their report directories; mate report merges them', () => {
  const reports = path.join(tmp, 'reports');
  const shards = [];

  test('vitest --shard 1/2 and 2/2 (plain vitest, flags after --)', async () => {
    for (const shard of ['1/2', '2/2']) {
      const r = await vitest('bugs', ['run', `--shard=${shard}`, '--', '--guard-alloc', '--guard-report-dir', reports]);
      assert.notEqual(r.code, 0, r.output);
      assert.match(
        r.output,
        new RegExp(`^\\[mate-guard\\] reports: ${reports}/vitest-`, 'm'),
        "the run's directory, inside the one given, is named",
      );
      shards.push(r);
    }
    assert.equal(
      shards.reduce((n, r) => n + summaryOf(r.output).violations, 0),
      4,
      'each shard ran its half of the four bugs',
    );
  });

  test('mate-jest --shard=1/2 and 2/2', async () => {
    for (const shard of ['1/2', '2/2']) {
      const r = await mateJest([
        '--guard-alloc',
        '--no-guard-rerun',
        '--guard-report-dir',
        reports,
        '-c',
        path.join(FIX, 'jest', 'bugs', 'jest.config.js'),
        `--shard=${shard}`,
        '-w',
        '2',
        '--workerIdleMemoryLimit=1GB',
      ]);
      assert.notEqual(r.code, 0, r.output);
      shards.push(r);
    }
  });

  test('mocha has no --shard: shards are file lists (a clean one included: its directory is kept too)', async () => {
    for (const files of [['fault/overflow.spec.cjs'], ['canary/canary.spec.cjs'], ['clean/clean.spec.cjs']]) {
      const r = await mocha(['--guard-alloc', `--guard-report-dir=${reports}`, ...files]);
      shards.push(r);
    }
    assert.equal(summaryOf(shards.at(-1).output).violations, 0);
    assert.equal(fs.readdirSync(reports).length, shards.length, 'one directory per run, clean or not');
  });

  test('mate report: every report once, the merged counts, exit 1', async () => {
    const r = await mateReport([reports]);
    assert.equal(r.code, 1, r.output);
    const merged = summaryOf(r.output);
    // The serial mocha shard died of its fault before any summary: its report carries its counters.
    const each = shards.filter((s) => /^\[mate-guard\] summary:/m.test(s.output)).map((s) => summaryOf(s.output));
    assert.equal(each.length, shards.length - 1);
    assert.equal(merged.violations, each.reduce((n, s) => n + s.violations, 0) + 1);
    assert.equal(merged.violations, 11, '4 vitest + 4 jest + 3 mocha');
    assert.ok(
      merged.allocations > each.reduce((n, s) => n + s.allocations, 0),
      "every shard's allocations, the dead one's too",
    );
    assert.equal(errors(r.output).length, 11, r.output);
    assert.match(r.output, /^\[mate-guard\] merged 7 report directories \(2 jest, 3 mocha, 2 vitest\)$/m);
    // A directory named twice, or a run directory beside its parent: still each report once.
    const again = await mateReport([reports, reports, path.join(reports, fs.readdirSync(reports)[0])]);
    assert.equal(errors(again.output).length, 11);
    assert.equal(summaryOf(again.output).violations, 11);
  });

  test('mate report: clean runs exit 0; no run at all is an error', async () => {
    const clean = fs
      .readdirSync(reports)
      .map((d) => path.join(reports, d))
      .filter((d) => !fs.readdirSync(d).some((f) => f.startsWith('mate-guard-')));
    assert.equal(clean.length, 1);
    const r = await mateReport(clean);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /0 violations/);
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    const none = await mateReport([empty]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no mate-guard run in it/);
  });
});

/** testcase name -> failure message, from JUnit XML. */
function junitFailures(file) {
  const xml = fs.readFileSync(file, 'utf8');
  const decode = (s) =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
      .replace(/&amp;/g, '&');
  const out = new Map();
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const name = /\bname="([^"]*)"/.exec(m[1])?.[1] ?? '';
    const f = /<failure\b([^>]*)>([\s\S]*?)<\/failure>|<failure\b([^>]*)\/>/.exec(m[2] ?? '');
    if (!f) continue;
    const attr = /message="([^"]*)"/.exec(f[1] ?? f[3] ?? '');
    const body = (f[2] ?? '').replace(/^<!\[CDATA\[|\]\]>$/g, '');
    out.set(decode(name), decode(attr?.[1] || body));
  }
  return out;
}

const firstLine = (message) => message.split('\n').find((l) => l.startsWith('==mate-guard== '));

describe('a violation is a failed test in JUnit XML, with the report as its message (crashed tests too)', () => {
  test('vitest junit', async () => {
    const xml = path.join(tmp, 'vitest.xml');
    const r = await vitest('bugs', [
      'run',
      'overflow',
      'underflow',
      '--reporter=junit',
      `--outputFile.junit=${xml}`,
      '--',
      '--guard-alloc',
    ]);
    assert.notEqual(r.code, 0, r.output);
    const failures = junitFailures(xml);
    assert.match(
      failures.get('fill > fillInclusive overflows by one').split('\n')[0],
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.match(
      firstLine(failures.get('reverseFill underflows by one')),
      /^==mate-guard== ERROR: canary-corruption: 1 byte before the start/,
    );
  });

  test('jest-junit (with options in the config: mate-jest adds its reporter through the config)', async () => {
    const dir = path.join(tmp, 'jest-junit');
    const r = await mateJest(
      [
        '--guard-alloc',
        '--no-guard-rerun',
        '-c',
        path.join(FIX, 'jest', 'junit', 'jest.config.js'),
        '-w',
        '2',
        '--workerIdleMemoryLimit=1GB',
      ],
      { JUNIT_DIR: dir },
    );
    assert.notEqual(r.code, 0, r.output);
    const failures = junitFailures(path.join(dir, 'junit.xml'));
    assert.match(
      failures.get('fill fills one byte too many').split('\n')[0],
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.match(
      firstLine(failures.get('reverseFill runs down to index -1')),
      /^==mate-guard== ERROR: canary-corruption: 1 byte before the start/,
    );
  });

  // mocha-junit-reporter 2.2.1 does not load under Mocha 12 (`Class constructor Base cannot be
  // invoked without 'new'`); Mocha's own xunit reporter writes the same JUnit XML.
  test('mocha --reporter xunit: serial canary damage, and a --parallel worker a fault killed', async () => {
    const serial = path.join(tmp, 'mocha-serial.xml');
    await mocha([
      '--guard-alloc',
      '--reporter',
      'xunit',
      '--reporter-option',
      `output=${serial}`,
      'canary/canary.spec.cjs',
    ]);
    assert.match(
      firstLine(junitFailures(serial).get('underflows by one')),
      /^==mate-guard== ERROR: canary-corruption: 1 byte before the start/,
    );
    const parallel = path.join(tmp, 'mocha-parallel.xml');
    const r = await mocha([
      '--guard-alloc',
      '--parallel',
      '--reporter',
      'xunit',
      '--reporter-option',
      `output=${parallel}`,
      'fault/overflow.spec.cjs',
      'clean/clean.spec.cjs',
    ]);
    assert.notEqual(r.code, 0, r.output);
    assert.match(
      junitFailures(parallel).get('fills one byte too far').split('\n')[0],
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
  });
});

describe('suppressions', () => {
  test('a file that silences exactly one of two violations: that test passes, counted as suppressed; the other fails with its suppression line', async () => {
    const r = await mocha([
      '--guard-alloc',
      `--guard-suppressions=${SUPP('mocha-underflow.supp')}`,
      'canary/canary.spec.cjs',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /3 passing/);
    assert.match(r.output, /1 failing/);
    assert.deepEqual(
      errors(r.output).map((l) => l.replace(/#\d+/, '#N')),
      ['==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #N (13 bytes, tail mode) damaged'],
    );
    assert.ok(
      r.output.includes(
        '==mate-guard== suppression: canary-corruption allocation=*canary.spec.cjs:15:* test="canary/canary.spec.cjs > canary damage > overflows into the alignment gap"',
      ),
      r.output,
    );
    const s = summaryOf(r.output);
    assert.equal(s.violations, 1);
    assert.equal(s.suppressed, 1);
  });

  test('the printed suppression line, pasted into a file, silences that report (MATE_MOCHA_GUARD_SUPPRESSIONS)', async () => {
    const first = await mocha(['--guard-alloc', 'canary/canary.spec.cjs']);
    const lines = reportLines(first.output)
      .filter((l) => l.startsWith('==mate-guard== suppression: '))
      .map((l) => l.slice('==mate-guard== suppression: '.length));
    assert.equal(lines.length, 2, first.output);
    const file = path.join(tmp, 'pasted.supp');
    fs.writeFileSync(file, `${[...new Set(lines)].join('\n')}\n`);
    const r = await mocha(['--guard-alloc', 'canary/canary.spec.cjs'], { MATE_MOCHA_GUARD_SUPPRESSIONS: file });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /4 passing/);
    assert.equal(summaryOf(r.output).suppressed, 2);
  });

  test('a suppressed fault: the worker still dies (that is the guard), the report says so, counted as suppressed', async () => {
    const r = await vitest('pools', ['run', '--', '--guard-alloc', '--guard-suppressions', SUPP('fault.supp')]);
    assert.notEqual(r.code, 0, 'vitest fails the file whose worker died');
    assert.match(
      r.output,
      /^==mate-guard== suppressed by .*fault\.supp:2 \(heap-buffer-overflow function=FillInclusive module=\*\/buggy_addon\.node\): counted, not failed; a fault still ends its process$/m,
    );
    const s = summaryOf(r.output);
    assert.equal(s.violations, 0);
    assert.equal(s.suppressed, 1);
  });

  test('guard-run --suppressions: damage found at exit is counted, not failed; no rerun for it', async () => {
    const r = await guardRun(
      ['--suppressions', SUPP('script-underflow.supp')],
      [path.join(ROOT, 'examples', 'scripts', 'underflow.js')],
    );
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(errors(r.output), []);
    assert.doesNotMatch(r.output, /rerunning/);
    assert.equal(summaryOf(r.output).suppressed, 1);
  });

  test('a malformed file stops the run before any test, naming the file and the line', async () => {
    const bad = SUPP('malformed.supp');
    for (const r of [
      await mocha(['--guard-alloc', 'clean/clean.spec.cjs'], { MATE_MOCHA_GUARD_SUPPRESSIONS: bad }),
      await vitest('bugs', ['run', 'underflow', '--', '--guard-alloc', '--guard-suppressions', bad]),
      await mateJest([
        '--guard-alloc',
        `--guard-suppressions=${bad}`,
        '-c',
        path.join(FIX, 'jest', 'bugs', 'jest.config.js'),
        'underflow',
      ]),
    ]) {
      assert.notEqual(r.code, 0, r.output);
      assert.ok(r.output.includes(`${bad}:3: unknown kind "heap-overflow"`), r.output);
      assert.doesNotMatch(r.output, /passing|Test Files|Tests:|==mate-guard==/);
    }
  });
});
