// Reports where CI shows them: `mate report --format sarif` (SARIF 2.1.0,
// validated against its JSON schema) and `--format github` (workflow
// annotations), over report directories of real guarded runs of the
// examples addon; and report files that cannot be read, named and counted
// by `mate report` and by a runner's main process.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { BIN, MATE, ROOT, run } from './helpers/run.mjs';

const require = createRequire(import.meta.url);
const Ajv = require('ajv-draft-04');
const addFormats = require('ajv-formats');

const FIX = path.join(ROOT, 'test', 'fixtures');
const MOCHA_FIX = path.join(FIX, 'mocha');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const { REPORT_KINDS } = require(path.join(ROOT, 'packages', 'core-native', 'dist', 'report', 'kinds.js'));

// The schema, vendored from @microsoft/jest-sarif (test/fixtures/sarif/README.md):
// draft-04, with one pattern written for non-unicode regular expressions.
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validateSarif = ajv.compile(
  JSON.parse(fs.readFileSync(path.join(FIX, 'sarif', 'sarif-2.1.0-rtm.5.json'), 'utf8')),
);
const assertValidSarif = (doc) =>
  assert.ok(validateSarif(doc), `not SARIF 2.1.0: ${JSON.stringify(validateSarif.errors, null, 2)}`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-ci-formats-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** What each mochaRun printed (stdout and stderr), by the parent it returned. */
const runOutput = new Map();

/** A mocha run of `files` (cwd test/fixtures/mocha) keeping its report directory in `<tmp>/<name>`; returns that parent. */
async function mochaRun(name, files, flags = [], cli = 'plain', fails = true) {
  const parent = path.join(tmp, name);
  const args = ['--guard-alloc', `--guard-report-dir=${parent}`, ...flags, ...files];
  const r =
    cli === 'mate-mocha'
      ? await run(process.execPath, [MATE_MOCHA, ...args], { cwd: MOCHA_FIX })
      : await run(path.join(BIN, 'mocha'), ['--require', '@mate-guard/mocha', ...args], { cwd: MOCHA_FIX });
  assert.equal(r.code !== 0, fails, r.output);
  runOutput.set(parent, r.output);
  return parent;
}

const mateReport = (args, opts) => run(process.execPath, [MATE, 'report', ...args], opts);

/** The 1-based line of `file` (relative to the repository) that holds `text`. */
function lineOf(file, text) {
  const i = fs
    .readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  assert.ok(i >= 0, `${file} has no line with ${JSON.stringify(text)}`);
  return i + 1;
}

const BUGGY = 'examples/addon/src/buggy.cc';
const OVERFLOW_SPEC = 'test/fixtures/mocha/fault/overflow.spec.cjs';
const CANARY_SPEC = 'test/fixtures/mocha/canary/canary.spec.cjs';

/** The SARIF document `mate report --format sarif` prints for `dirs` (valid, or the test fails). */
async function sarifOf(dirs, opts) {
  const r = await mateReport([...dirs, '--format', 'sarif'], opts);
  assert.equal(r.code, 1, r.output);
  const doc = JSON.parse(r.stdout);
  assertValidSarif(doc);
  return { doc, results: doc.runs[0].results, stderr: r.stderr };
}

const primary = (result) => {
  const p = result.locations[0].physicalLocation;
  return { uri: p.artifactLocation.uri, base: p.artifactLocation.uriBaseId, line: p.region?.startLine };
};
const related = (result, message) => result.relatedLocations?.find((l) => l.message.text.startsWith(message));

/** The rerun results a run's output shows: each `[mate-guard] rerun in ...` line and the report under it (to its suppression line). */
const rerunBlocks = (output) =>
  [...output.matchAll(/^\[mate-guard\] rerun in .*\n(?:==mate-guard== .*\n)*?==mate-guard== suppression: .*\n/gm)].map(
    (m) => m[0],
  );

describe('mate report (text, --format sarif, --format github), over real guarded runs', () => {
  const dirs = {};
  before(async () => {
    dirs.overflow = await mochaRun('overflow', ['fault/overflow.spec.cjs']); // a fault: the process dies
    dirs.overflowAgain = await mochaRun('overflow-again', ['fault/overflow.spec.cjs']);
    dirs.canary = await mochaRun('canary', ['canary/canary.spec.cjs'], [], 'mate-mocha'); // damage, then the rerun that faults
    dirs.canaryJsOnly = await mochaRun('canary-js-only', ['canary/canary.spec.cjs'], ['--no-guard-rerun']);
  });

  test('SARIF 2.1.0 (schema-valid): one result per violation, rule = report kind from the one kinds list, the access site in the repository', async () => {
    const { doc, results, stderr } = await sarifOf([dirs.overflow, dirs.canary]);
    assert.equal(doc.version, '2.1.0');
    const driver = doc.runs[0].tool.driver;
    assert.equal(driver.name, 'mate-guard');
    assert.deepEqual(
      driver.rules.map((r) => r.id),
      REPORT_KINDS,
    );
    assert.match(
      stderr,
      /^\[mate-guard\] summary: .* 3 violations, /m,
      'the summary goes to stderr: stdout is the document',
    );
    assert.equal(results.length, 3, 'the fault and the two canary reports');
    for (const r of results) {
      assert.equal(driver.rules[r.ruleIndex].id, r.ruleId);
      assert.equal(r.level, 'error');
    }
    assert.ok(doc.runs[0].originalUriBaseIds['%SRCROOT%'].uri.startsWith('file:///'));

    const fault = results.find((r) => r.ruleId === 'heap-buffer-overflow');
    assert.deepEqual(primary(fault), { uri: BUGGY, base: '%SRCROOT%', line: lineOf(BUGGY, 'i <= len; i++) POKE') });
    assert.match(fault.locations[0].logicalLocations[0].fullyQualifiedName, /FillInclusive/);
    assert.match(
      fault.message.text,
      /^ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)\ntest: fault\/overflow\.spec\.cjs > overflow > fills one byte too far\n/,
    );
    const alloc = related(fault, 'allocated here').physicalLocation;
    assert.deepEqual(
      [alloc.artifactLocation.uri, alloc.region.startLine],
      [OVERFLOW_SPEC, lineOf(OVERFLOW_SPEC, 'addon.fillInclusive(Buffer.alloc(64))')],
    );
    // The test's file is relative to the repository, though the runner named it relative to its working directory.
    assert.equal(
      related(fault, 'test: fault/overflow.spec.cjs > overflow > fills one byte too far').physicalLocation
        .artifactLocation.uri,
      OVERFLOW_SPEC,
    );
    assert.deepEqual(
      fault.stacks.map((s) => s.message.text),
      ['access', 'allocated at'],
    );
    assert.match(fault.stacks[0].frames[0].location.logicalLocations[0].fullyQualifiedName, /FillInclusive/);
    assert.equal(fault.stacks[0].frames[0].module, 'buggy_addon.node');

    // Canary damage: found late; the rerun's fault is the access site.
    const underflow = results.find((r) => r.ruleId === 'canary-corruption' && /before the start/.test(r.message.text));
    assert.deepEqual(primary(underflow), { uri: BUGGY, base: '%SRCROOT%', line: lineOf(BUGGY, 'i >= -1; i--) POKE') });
    assert.match(
      underflow.message.text,
      /\nthe rerun in head mode, alignment 16 faulted: heap-buffer-underflow on WRITE .* at ReverseFill examples\/addon\/src\/buggy\.cc:\d+/,
    );
    const gap = results.find((r) => r.ruleId === 'canary-corruption' && /past the end/.test(r.message.text));
    assert.deepEqual(primary(gap), { uri: BUGGY, base: '%SRCROOT%', line: lineOf(BUGGY, 'POKE(p + off, value)') });
    assert.equal(
      related(gap, 'allocated here').physicalLocation.region.startLine,
      lineOf(CANARY_SPEC, 'new ArrayBuffer(13)'),
    );
  });

  test("mate report's text shows, under each canary report of a kept directory, what the run's rerun found (its fault's report, with the access site) as the run's terminal showed it", async () => {
    const r = await mateReport([dirs.canary]);
    assert.equal(r.code, 1, r.output);
    const shown = rerunBlocks(runOutput.get(dirs.canary));
    assert.equal(shown.length, 2, runOutput.get(dirs.canary));
    assert.deepEqual(rerunBlocks(r.stdout), shown, r.output);
    for (const [block, test, headline] of [
      [
        shown[0],
        'underflows by one',
        /^\[mate-guard\] rerun in head mode: the canary-corruption of allocation #\d+ \(64 bytes, tail mode\) in canary\/canary\.spec\.cjs > canary damage > underflows by one faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE /,
      ],
      [
        shown[1],
        'overflows into the alignment gap',
        /^\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in canary\/canary\.spec\.cjs > canary damage > overflows into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE /,
      ],
    ]) {
      assert.match(block, headline);
      assert.match(block, /\n==mate-guard== {3}#0 \w+ \S*examples\/addon\/src\/buggy\.cc:\d+ /, block);
      // Right under the canary report it is about (whose last line is its suppression).
      const under = r.stdout.split(block)[0].trimEnd().split('\n').at(-1);
      assert.match(
        under,
        new RegExp(
          `^==mate-guard== suppression: canary-corruption .*test="canary/canary\\.spec\\.cjs > canary damage > ${test}"$`,
        ),
        r.output,
      );
    }
    // Without a rerun (--no-guard-rerun), nothing under the reports.
    const plain = await mateReport([dirs.canaryJsOnly]);
    assert.deepEqual(rerunBlocks(plain.stdout), [], plain.output);
    assert.doesNotMatch(plain.stdout, /\[mate-guard\] rerun/, plain.output);
  });

  test("the schema check bites: the same document with a result's level misspelt is rejected", async () => {
    const { doc } = await sarifOf([dirs.overflow]);
    doc.runs[0].results[0].level = 'fatal';
    assert.equal(validateSarif(doc), false);
    assert.ok(
      validateSarif.errors.some((e) => e.instancePath === '/runs/0/results/0/level'),
      JSON.stringify(validateSarif.errors),
    );
  });

  test('fingerprints: the same bug in two runs gets the same one (no pid, address or allocation number in it); different bugs differ', async () => {
    const a = (await sarifOf([dirs.overflow])).results[0];
    const b = (await sarifOf([dirs.overflowAgain])).results[0];
    assert.notEqual(a.message.text, b.message.text, 'two runs: other addresses');
    assert.deepEqual(a.fingerprints, b.fingerprints);
    assert.deepEqual(a.partialFingerprints, b.partialFingerprints);
    assert.match(Object.values(a.fingerprints)[0], /^[0-9a-f]{32}$/);
    const canary = (await sarifOf([dirs.canary])).results;
    const ids = new Set([a, ...canary].map((r) => Object.values(r.fingerprints)[0]));
    assert.equal(ids.size, 3);
    // The rerun's fault is not part of it: the same damage without a rerun is the same bug.
    const jsOnly = (await sarifOf([dirs.canaryJsOnly])).results;
    assert.deepEqual(jsOnly.map((r) => r.fingerprints).sort(), canary.map((r) => r.fingerprints).sort());
  });

  test('paths stay relative to the repository the run recorded when mate report runs elsewhere (a CI artifact merged in another directory)', async () => {
    const copy = path.join(tmp, 'artifact');
    fs.cpSync(dirs.overflow, copy, { recursive: true });
    const { results } = await sarifOf([copy], { cwd: os.tmpdir() });
    assert.deepEqual(primary(results[0]), {
      uri: BUGGY,
      base: '%SRCROOT%',
      line: lineOf(BUGGY, 'i <= len; i++) POKE'),
    });
  });

  test('--format github: one ::error annotation per violation at its access site, the report as its message', async () => {
    const r = await mateReport([dirs.overflow, dirs.canary, '--format', 'github']);
    assert.equal(r.code, 1, r.output);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.equal(annotations.length, 3, r.stdout);
    const fault = annotations.find((l) => l.includes('heap-buffer-overflow on WRITE'));
    assert.ok(fault.startsWith(`::error file=${BUGGY},line=${lineOf(BUGGY, 'i <= len; i++) POKE')},`), fault);
    assert.match(
      fault,
      /,title=mate-guard%3A heap-buffer-overflow on WRITE at 0x[0-9a-f]+%3A 1 byte past the end of allocation #\d+ \(64 bytes%2C tail mode\)::ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.match(
      fault,
      /%0Atest: fault\/overflow\.spec\.cjs > overflow > fills one byte too far%0A/,
      'newlines encoded: one line per annotation',
    );
    assert.ok(
      annotations.some((l) => l.startsWith(`::error file=${BUGGY},line=${lineOf(BUGGY, 'i >= -1; i--) POKE')},`)),
      r.stdout,
    );
    assert.match(r.stdout, /^\[mate-guard\] summary: .* 3 violations, /m);
  });

  test("--format github, JS-only stacks (canary damage, no rerun): the annotation is at the test's file, where the test allocated the buffer", async () => {
    const r = await mateReport([dirs.canaryJsOnly, '--format', 'github']);
    assert.equal(r.code, 1, r.output);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.deepEqual(
      annotations.map((l) => /^::error file=([^,]+),line=(\d+),/.exec(l)?.slice(1)).sort(),
      [
        [CANARY_SPEC, String(lineOf(CANARY_SPEC, 'new ArrayBuffer(13)'))],
        [CANARY_SPEC, String(lineOf(CANARY_SPEC, 'addon.reverseFill(Buffer.alloc(64))'))],
      ].sort(),
    );
  });

  test('every kind of event recorded on other machines (test/fixtures/events: CUDA, deaths, faults): schema-valid SARIF and one annotation each, and no place named that is not in this repository', async () => {
    const dir = path.join(tmp, 'recorded-elsewhere');
    fs.mkdirSync(dir);
    const names = fs.readdirSync(path.join(FIX, 'events'));
    names.forEach((name, i) =>
      fs.copyFileSync(path.join(FIX, 'events', name), path.join(dir, `mate-guard-${9000 + i}-1.json`)),
    );
    const { results } = await sarifOf([dir]);
    assert.equal(results.length, names.length);
    assert.deepEqual(
      new Set(results.map((r) => r.ruleId)),
      new Set(names.map((n) => JSON.parse(fs.readFileSync(path.join(FIX, 'events', n), 'utf8')).kind)),
    );
    // Recorded in checkouts at other paths, by runs that did not record where they ran: no location is guessed.
    assert.deepEqual(
      results.filter((r) => r.locations || r.relatedLocations),
      [],
    );
    const github = await mateReport([dir, '--format', 'github']);
    const annotations = github.stdout.split('\n').filter((l) => l.startsWith('::'));
    assert.equal(annotations.length, names.length);
    assert.deepEqual(
      annotations.filter((l) => l.includes(' file=') || l.startsWith('::error file=')),
      [],
    );
  });

  test('a bad --format is refused, naming the value and the formats', async () => {
    const r = await mateReport([dirs.overflow, '--format', 'xml']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^mate: --format "xml" is not a format; known: text, sarif, github$/m);
  });

  describe('a report file that cannot be read is named, counted as a violation, and fails the run', () => {
    /** A copy of a run's directory, with what `edit(dir, eventFile)` does to it. */
    function copyOf(name, from, edit) {
      const [runDir] = fs.readdirSync(from);
      const dir = path.join(tmp, name);
      fs.cpSync(path.join(from, runDir), dir, { recursive: true });
      const event = fs.readdirSync(dir).find((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
      edit(dir, event && path.join(dir, event));
      return dir;
    }

    test('a truncated mate-guard-<pid>-<n>.json beside a good one (a CI artifact cut short)', async () => {
      let cut;
      const dir = copyOf('cut-short', dirs.overflow, (_dir, good) => {
        const text = fs.readFileSync(good, 'utf8');
        cut = good.replace(/-(\d+)\.json$/, (_, n) => `-${Number(n) + 1}.json`);
        fs.writeFileSync(cut, text.slice(0, Math.floor(text.length / 2)));
      });
      const r = await mateReport([dir]);
      assert.equal(r.code, 1, r.output);
      assert.match(
        r.stderr,
        new RegExp(
          `^\\[mate-guard\\] error: cannot read report file ${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cut short \\(.*\\); counted as a violation that could not be read$`,
          'm',
        ),
      );
      assert.match(
        r.stdout,
        /^\[mate-guard\] summary: .* 2 violations \(1 could not be read\), /m,
        'not "1 violation"',
      );
      assert.equal(r.stdout.split('\n').filter((l) => l.includes(' ERROR: ')).length, 1, 'the good one is printed');

      const sarif = await mateReport([dir, '--format', 'sarif']);
      assert.equal(sarif.code, 1);
      const doc = JSON.parse(sarif.stdout);
      assertValidSarif(doc);
      const invocation = doc.runs[0].invocations[0];
      assert.equal(invocation.executionSuccessful, false);
      assert.deepEqual(
        invocation.toolExecutionNotifications.map((n) => [
          n.level,
          n.locations[0].physicalLocation.artifactLocation.uri,
        ]),
        [['error', `file://${cut}`]],
      );
      assert.ok(sarif.stderr.includes(`cannot read report file ${cut}`));

      const github = await mateReport([dir, '--format', 'github']);
      assert.ok(
        github.stdout.includes(
          `::error title=mate-guard%3A a report file could not be read::cannot read report file ${cut}: cut short`,
        ),
        github.stdout,
      );
    });

    test('alone in a clean run, it still fails the merge (before, it exited 0 with "0 violations")', async () => {
      const clean = await mochaRun('clean', ['clean/clean.spec.cjs'], [], 'plain', false);
      assert.equal((await mateReport([clean])).code, 0);
      const dir = copyOf('clean-cut', clean, (d) => fs.writeFileSync(path.join(d, 'mate-guard-4242-1.json'), ''));
      const r = await mateReport([dir]);
      assert.equal(r.code, 1, r.output);
      assert.match(r.stderr, /cannot read report file .*mate-guard-4242-1\.json: the file is empty; counted/);
      assert.match(r.stdout, /1 violation \(1 could not be read\), /);
    });

    test('a report whose writing never finished (its .tmp left, as by a full disk) counts; a .tmp beside its finished report does not', async () => {
      const dir = copyOf('unfinished', dirs.overflow, (d, good) => {
        fs.writeFileSync(path.join(d, 'mate-guard-4242-3.json.tmp'), '{"tool":"mate-guard","kind":"heap');
        fs.writeFileSync(`${good}.tmp`, '{"tool":"mate-guard"'); // a rewrite of a report that stands
      });
      const r = await mateReport([dir]);
      assert.equal(r.code, 1, r.output);
      const named = r.stderr.split('\n').filter((l) => l.includes('cannot read report file'));
      assert.equal(named.length, 1, r.stderr);
      assert.match(named[0], /mate-guard-4242-3\.json\.tmp: its writing never finished/);
      assert.match(r.stdout, /2 violations \(1 could not be read\), /);
    });

    test("a runner's main process (plain mocha, every test passed): names the file, counts it, exits 1", async () => {
      const r = await run(
        path.join(BIN, 'mocha'),
        ['--require', '@mate-guard/mocha', '--guard-alloc', 'unreadable/cut-short.spec.cjs'],
        { cwd: MOCHA_FIX },
      );
      assert.match(r.output, /1 passing/);
      assert.match(
        r.stderr,
        /^\[mate-guard\] error: cannot read report file \S+\/mate-guard-\d+-7\.json: cut short \(.*\); counted as a violation that could not be read$/m,
      );
      assert.match(r.stderr, /^\[mate-guard\] summary: .* 1 violation \(1 could not be read\), /m);
      assert.match(r.stderr, /^\[mate-guard\] reports: /m, 'the directory is kept');
      assert.equal(r.code, 1, r.output);
    });
  });
});
