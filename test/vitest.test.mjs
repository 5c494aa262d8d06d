// @mate-guard/vitest: the real vitest (4.1.x) on fixture suites that use the
// real planted-bug addon, through the mate-vitest CLI and plain vitest.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { assertGcSuiteGuarded } from './helpers/gc-suite.mjs';
import { accessSite, lineOf } from './helpers/native-frames.mjs';
import { firstAllocationFrame, MATE, rerunReportOf, reportLines, reportOf, ROOT, run } from './helpers/run.mjs';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'vitest');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');

/** `mate-vitest <args>` in a fixture directory. */
const mateVitest = (fixture, args, env) =>
  run(process.execPath, [MATE_VITEST, ...args], { cwd: path.join(FIXTURES, fixture), env });
/** Plain `vitest <args>` in a fixture directory. */
const vitest = (fixture, args, env) =>
  run(process.execPath, [VITEST, ...args], { cwd: path.join(FIXTURES, fixture), env });

/** Adds the JSON reporter (to a file) beside the default one; returns the args and a reader. */
function withJson(args) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-vitest-json-')), 'report.json');
  return {
    file,
    args: [...args, '--reporter=default', '--reporter=json', `--outputFile.json=${file}`],
    /** fullName ("suite test") -> { status, failureMessages } */
    read() {
      const data = JSON.parse(fs.readFileSync(file, 'utf8'));
      const tests = new Map();
      for (const f of data.testResults)
        for (const a of f.assertionResults) tests.set(`${path.basename(f.name)} > ${a.fullName}`, a);
      return tests;
    },
  };
}

const SUMMARY =
  /^\[mate-guard\] summary: (\d+) allocations? guarded, peak live (\d+), (\d+) unguarded fallbacks?, (\d+) violations?, (?:\d+ process(?:es)? died, )?(\d+) tests? skipped by tag$/m;

function summary(output) {
  const m = SUMMARY.exec(output);
  assert.ok(m, `no summary line in:\n${output}`);
  const [, allocations, peakLive, fallbacks, violations, skipped] = m.map(Number);
  return { allocations, peakLive, fallbacks, violations, skipped };
}

describe('planted bugs, guarded (forks pool, mate-vitest --guard-alloc)', () => {
  let r;
  let json;
  test('the run fails and names every bug, its allocation and its test', async () => {
    const j = withJson(['run', '--guard-alloc']);
    r = await mateVitest('bugs', j.args);
    json = j.read();
    assert.notEqual(r.code, 0, r.output);
    assert.equal(summary(r.output).violations, 4, r.output);
  });

  test('overflow by one: heap-buffer-overflow fault, attributed to the test that was running', () => {
    const rep = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
    assert.match(rep, /1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/);
    assert.match(rep, /^==mate-guard== test: overflow\.test\.mjs > fill > fillInclusive overflows by one$/m);
    // Main process: the plugin names the test vitest only knows as "worker exited".
    assert.match(
      r.output,
      /^\[mate-guard\] test worker \d+ was killed by a guard fault: heap-buffer-overflow on allocation #\d+ \(64 bytes, tail mode\) while running overflow\.test\.mjs > fill > fillInclusive overflows by one;/m,
    );
    const t = json.get('overflow.test.mjs > fill fillInclusive overflows by one');
    assert.equal(t.status, 'failed');
    assert.match(t.failureMessages.join('\n'), /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
    assert.match(r.output, /FAIL\s+overflow\.test\.mjs > fill > fillInclusive overflows by one/);
  });

  test('underflow by one in tail mode: canary-corruption fails that test only', () => {
    const rep = reportOf(r.output, 'ERROR: canary-corruption: 1 byte before the start');
    assert.match(rep, /allocation #\d+ \(64 bytes, tail mode\) damaged/);
    assert.match(rep, /^==mate-guard== test: underflow\.test\.mjs > reverseFill underflows by one$/m);
    assert.match(rep, /rerun with --guard-mode head/);
    assert.equal(json.get('underflow.test.mjs > reverseFill underflows by one').status, 'failed');
    assert.match(
      json.get('underflow.test.mjs > reverseFill underflows by one').failureMessages.join('\n'),
      /canary-corruption/,
    );
    assert.equal(json.get('underflow.test.mjs > a later clean test still passes').status, 'passed');
  });

  test('overflow into the alignment gap: canary-corruption on the 13-byte allocation', () => {
    const rep = reportOf(r.output, 'ERROR: canary-corruption: 2 bytes past the end');
    assert.match(rep, /allocation #\d+ \(13 bytes, tail mode\) damaged/);
    assert.match(rep, /^==mate-guard== test: gap\.test\.mjs > writeAt past the end into the alignment gap$/m);
    assert.equal(json.get('gap.test.mjs > writeAt past the end into the alignment gap').status, 'failed');
  });

  test('every report ends at the line that did it: the access block names the addon function and line (canary damage through the rerun)', () => {
    const overflow = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
    assert.match(overflow, accessSite('overflow'));
    assert.match(
      firstAllocationFrame(overflow),
      /^==mate-guard==   at .*overflow\.test\.mjs:\d+:\d+/,
      "the allocation stack starts at the test file's line",
    );
    assert.match(overflow, /… \d+ runner frames?$/m);
    assert.match(reportOf(r.output, 'ERROR: heap-use-after-free on WRITE'), accessSite('use-after-free'));
    assert.match(rerunReportOf(r.output, 'head mode'), accessSite('underflow'));
    assert.match(rerunReportOf(r.output, 'tail mode with alignment 1'), accessSite('gap'));
  });

  test('use-after-free through a retained pointer: heap-use-after-free fault, attributed', () => {
    const rep = reportOf(r.output, 'ERROR: heap-use-after-free on WRITE');
    assert.match(rep, /freed allocation #\d+ \(256 bytes, tail mode\)/);
    assert.match(
      rep,
      /^==mate-guard== test: use-after-free\.test\.mjs > touchRetained writes through a stale pointer$/m,
    );
    assert.match(rep, /freed by the garbage collector/);
    assert.match(
      r.output,
      /killed by a guard fault: heap-use-after-free on allocation #\d+ \(256 bytes, tail mode\) while running use-after-free\.test\.mjs > touchRetained writes through a stale pointer;/,
    );
    assert.equal(json.get('use-after-free.test.mjs > touchRetained writes through a stale pointer').status, 'failed');
  });
});

test('a fault while a file is imported (outside any test) fails that file, other files pass', async () => {
  const j = withJson(['run', '--guard-alloc']);
  const r = await mateVitest('import-crash', j.args);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE'),
    /1 byte past the end of allocation #\d+ \(32 bytes, tail mode\)/,
  );
  assert.match(
    r.output,
    /killed by a guard fault: heap-buffer-overflow on allocation #\d+ \(32 bytes, tail mode\) outside any test;/,
  );
  const files = Object.fromEntries(
    JSON.parse(fs.readFileSync(j.file, 'utf8')).testResults.map((f) => [path.basename(f.name), f]),
  );
  assert.equal(files['at-import.test.mjs'].status, 'failed');
  assert.match(files['at-import.test.mjs'].message, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
  assert.equal(files['fine.test.mjs'].status, 'passed');
});

test('a fault outside any test (afterAll) fails the test that made the allocation, as under every runner', async () => {
  // Core's crash attribution: no test was running, so the crash is put on the test whose allocation was hit.
  const j = withJson(['run', '--guard-alloc']);
  const r = await mateVitest('after-test-crash', j.args);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    r.output,
    /killed by a guard fault: heap-buffer-overflow on allocation #\d+ \(32 bytes, tail mode\) outside any test \(allocated in kept\.test\.mjs > keeps a buffer for later\);/,
  );
  const tests = j.read();
  assert.equal(tests.get('kept.test.mjs > keeps a buffer for later').status, 'failed', r.output);
  assert.match(
    tests.get('kept.test.mjs > keeps a buffer for later').failureMessages[0],
    /==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
  );
  // Its results may die with the worker (Vitest batches them): never failed by this crash.
  assert.notEqual(tests.get('kept.test.mjs > an unrelated test').status, 'failed', r.output);
});

test('damage outside any test (module code, beforeAll) fails the file with the reports', async () => {
  const j = withJson(['run', '--guard-alloc']);
  const r = await mateVitest('outside', j.args);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    r.output,
    /GuardViolationError: outside any test \(module code or beforeAll\/afterAll hooks of this file\): mate-guard found 2 memory violations/,
  );
  assert.match(
    reportOf(r.output, 'ERROR: canary-corruption: 2 bytes past the end'),
    /allocation #\d+ \(13 bytes, tail mode\)/,
  );
  assert.match(
    reportOf(r.output, 'ERROR: canary-corruption: 1 byte before the start'),
    /allocation #\d+ \(64 bytes, tail mode\)/,
  );
  assert.equal(summary(r.output).violations, 2);
  assert.equal(JSON.parse(fs.readFileSync(j.file, 'utf8')).testResults[0].status, 'failed');
});

test('damage a test does to buffers made before it (module code, beforeAll, an earlier test) fails that test', async () => {
  const j = withJson(['run', '--guard-alloc']);
  const r = await mateVitest('long-lived', j.args);
  assert.equal(r.code, 1, r.output);
  const tests = j.read();
  for (const [name, bytes] of [
    ['underflows the module buffer', '1 byte'],
    ['underflows the hook buffer', '2 bytes'],
    ['underflows the earlier test buffer', '3 bytes'],
  ]) {
    const t = tests.get(`long-lived.test.mjs > ${name}`);
    assert.equal(t.status, 'failed', name);
    assert.match(t.failureMessages.join(''), new RegExp(`ERROR: canary-corruption: ${bytes} before the start`), name);
    assert.match(
      t.failureMessages.join(''),
      new RegExp(`^==mate-guard== test: long-lived\\.test\\.mjs > ${name}$`, 'm'),
    );
  }
  assert.equal(tests.get('long-lived.test.mjs > makes a buffer for later').status, 'passed');
  assert.equal(tests.get('long-lived.test.mjs > a clean test after them').status, 'passed');
  assert.equal(summary(r.output).violations, 3, r.output);
});

test('head mode (--guard-mode head): the underflow faults at the first bad byte', async () => {
  const r = await mateVitest('bugs', ['run', 'underflow', '--guard-alloc', '--guard-mode', 'head']);
  assert.notEqual(r.code, 0, r.output);
  const rep = reportOf(r.output, 'ERROR: heap-buffer-underflow on WRITE');
  assert.match(rep, /1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/);
  assert.match(rep, /^==mate-guard== test: underflow\.test\.mjs > reverseFill underflows by one$/m);
  assert.match(
    r.output,
    /killed by a guard fault: heap-buffer-underflow on allocation #\d+ \(64 bytes, head mode\) while running underflow\.test\.mjs > reverseFill underflows by one;/,
  );
});

test('--guard-alignment 1 (a setting added as one row of the table) makes the alignment-gap write fault', async () => {
  const r = await mateVitest('bugs', ['run', 'gap', '--guard-alloc', '--guard-alignment', '1']);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE'),
    /2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/,
  );
  assert.match(r.output, /alignment 1, backend host/);
});

test('mate-vitest reruns files with canary damage in the faulting configuration; --no-guard-rerun and plain vitest do not', async () => {
  const r = await mateVitest('bugs', ['run', 'underflow', 'gap', '--guard-alloc']);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    r.output,
    /\[mate-guard\] rerunning underflow\.test\.mjs in head mode to find the access behind a canary report \(off: --no-guard-rerun\)/,
  );
  assert.match(
    r.output,
    /\[mate-guard\] rerun in head mode: the canary-corruption of allocation #\d+ \(64 bytes, tail mode\) in underflow\.test\.mjs > reverseFill underflows by one faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE/,
  );
  assert.match(
    r.output,
    /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in gap\.test\.mjs > writeAt past the end into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
  );
  assert.equal(summary(r.output).violations, 2, "the rerun's faults are not counted again");
  for (const off of [
    await mateVitest('bugs', ['run', 'underflow', '--guard-alloc', '--no-guard-rerun']),
    await vitest('bugs', ['run', 'underflow', '--', '--guard-alloc']),
  ]) {
    assert.match(off.output, /ERROR: canary-corruption: 1 byte before the start/);
    assert.doesNotMatch(off.output, /\[mate-guard\] rerun/);
  }
});

test('a TypeScript test: the allocation stack starts at the .ts source line (source-mapped)', async () => {
  const file = path.join(FIXTURES, 'typescript', 'overflow.test.ts');
  const line = lineOf(file, 'ALLOCATES HERE');
  const r = await mateVitest('typescript', ['run', '--guard-alloc']);
  assert.notEqual(r.code, 0, r.output);
  const rep = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
  assert.match(
    firstAllocationFrame(rep),
    new RegExp(`^==mate-guard==   at makeBuffer \\(.*overflow\\.test\\.ts:${line}:\\d+\\)$`),
    rep,
  );
  assert.match(rep, accessSite('overflow'));
});

describe('clean suite with tagged tests', () => {
  // [JSON name, path as printed, reason]
  const INCOMPATIBLE = 'guard allocator debug mode does not support this test (tagged guard_incompatible)';
  const GRAPH = 'guard allocator debug mode does not support graph capture';
  const TAGGED = [
    ['tagged.test.mjs > incompatible via helper', 'tagged.test.mjs > incompatible via helper', INCOMPATIBLE],
    ['tagged.test.mjs > graph capture via helper', 'tagged.test.mjs > graph capture via helper', GRAPH],
    ['tagged.test.mjs > graph capture via raw tags', 'tagged.test.mjs > graph capture via raw tags', GRAPH],
    [
      'tagged.test.mjs > incompatible describe inherits the tag',
      'tagged.test.mjs > incompatible describe > inherits the tag',
      INCOMPATIBLE,
    ],
    ['module-tag.test.mjs > tagged by the file', 'module-tag.test.mjs > tagged by the file', INCOMPATIBLE],
  ];
  const CLEAN = [
    'clean.test.mjs > clean addon use sum reads every byte in bounds',
    'clean.test.mjs > clean addon use writeAt and readAt on the last byte',
    'clean.test.mjs > clean addon use a WebAssembly out-of-bounds load still traps',
    'tagged.test.mjs > plain test beside tagged ones',
  ];

  test('guarded (default reporter + JSON): passes with no report; tagged tests skipped with the reason', async () => {
    const j = withJson(['run', '--guard-alloc']);
    const r = await mateVitest('clean', j.args);
    const tests = j.read();
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(reportLines(r.output), []);
    const s = summary(r.output);
    assert.equal(s.violations, 0);
    assert.equal(s.skipped, TAGGED.length);
    assert.ok(s.allocations > 0, 'buffers were guarded');
    for (const name of CLEAN) assert.equal(tests.get(name)?.status, 'passed', name);
    for (const [name, printed, reason] of TAGGED) {
      assert.equal(tests.get(name)?.status, 'skipped', name);
      // The default reporter lists single tests only for one-file runs; the plugin lists these.
      assert.ok(r.output.includes(`[mate-guard]   ↓ ${printed}: ${reason}`), `reason for ${name} in:\n${r.output}`);
    }
    assert.doesNotMatch(r.output, /RAN: /);
  });

  test('guarded, verbose reporter: the reason is shown on each skipped test', async () => {
    const r = await vitest('clean', ['run', '--reporter=verbose', '--', '--guard-alloc']);
    assert.equal(r.code, 0, r.output);
    for (const [name, printed, reason] of TAGGED) {
      const line = r.output.split('\n').find((l) => l.includes('↓') && l.replace(/\s+\d+ms/, '').includes(printed));
      assert.ok(line, `no skipped line for ${name} in:\n${r.output}`);
      assert.ok(line.includes(`[${reason}]`), line);
    }
    assert.doesNotMatch(r.output, /RAN: /);
  });

  test('unguarded: tagged tests run (tags are declared, strictTags is happy)', async () => {
    const j = withJson(['run']);
    const r = await vitest('clean', j.args);
    const tests = j.read();
    assert.equal(r.code, 0, r.output);
    for (const name of [...CLEAN, ...TAGGED.map(([n]) => n)]) assert.equal(tests.get(name)?.status, 'passed', name);
    assert.equal(r.output.match(/RAN: /g)?.length, TAGGED.length, r.output);
    assert.doesNotMatch(r.output, /\[mate-guard\]/);
  });
});

describe('node flags (--expose-gc): the tests get them the way Vitest passes them', () => {
  const GC_TEST = 'gc.test.mjs > collects garbage with global.gc'; // calls global.gc
  const SHOWN = ['--guard-alloc', '--guard-mode=head', '--guard-log-allocations'];

  test('node --expose-gc mate-vitest run --pool threads: Vitest runs in that process, its threads inherit the flag', async () => {
    assertGcSuiteGuarded(
      await run(process.execPath, ['--expose-gc', MATE_VITEST, 'run', 'gc.test', '--pool', 'threads', ...SHOWN], {
        cwd: path.join(FIXTURES, 'gc'),
      }),
      GC_TEST,
    );
  });

  test("mate-vitest's canary rerun runs with the node flags, the pool and --execArgv too: the gap write faults there", async () => {
    const threads = await run(
      process.execPath,
      ['--expose-gc', MATE_VITEST, 'run', 'after-gc-gap', '--pool', 'threads', '--guard-alloc'],
      { cwd: path.join(FIXTURES, 'gc') },
    );
    const forks = await mateVitest('gc', ['run', 'after-gc-gap', '--execArgv=--expose-gc', '--guard-alloc']);
    for (const r of [threads, forks]) {
      assert.notEqual(r.code, 0, r.output);
      assert.doesNotMatch(r.output, /globalThis\.gc is missing/);
      assert.match(
        r.output,
        /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in after-gc-gap\.test\.mjs > collects garbage, then writes into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
      );
    }
  });

  test('forks get node flags from --execArgv (Vitest passes none of its own): mate-vitest, and plain vitest with the flags after --', async () => {
    assertGcSuiteGuarded(await mateVitest('gc', ['run', 'gc.test', '--execArgv=--expose-gc', ...SHOWN]), GC_TEST);
    assertGcSuiteGuarded(await vitest('gc', ['run', 'gc.test', '--execArgv=--expose-gc', '--', ...SHOWN]), GC_TEST);
  });
});

describe('projects (test.projects) with the plugin in the root config only', () => {
  // packages/a: a clean test; packages/b: a write into the alignment gap. Their configs do not load the plugin.
  const GAP =
    /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged\n==mate-guard== test: \[b\] packages\/b\/gap\.test\.mjs > writes into the alignment gap/;
  const assertGuarded = (r) => {
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Tests +1 failed \| 1 passed \(2\)/);
    assert.match(r.output, GAP);
    const s = SUMMARY.exec(r.output);
    assert.ok(
      s && Number(s[1]) > 0 && s[4] === '1',
      `a summary with guarded allocations and the violation:\n${r.output}`,
    );
  };

  test('mate-vitest --guard-alloc guards every project from the root; the canary rerun faults', async () => {
    const r = await mateVitest('projects', ['run', '--guard-alloc']);
    assertGuarded(r);
    assert.match(
      r.output,
      /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in \[b\] packages\/b\/gap\.test\.mjs > writes into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
  });

  test('plain vitest: flags after -- and MATE_VITEST_GUARD_ALLOC=1 guard every project too', async () => {
    assertGuarded(await vitest('projects', ['run', '--', '--guard-alloc']));
    assertGuarded(await vitest('projects', ['run'], { MATE_VITEST_GUARD_ALLOC: '1' }));
  });

  test("--reporter on the command line (it replaces the config's reporters) still guards them; a JUnit file lists the failure", async () => {
    const junit = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-vitest-junit-')), 'junit.xml');
    const r = await mateVitest('projects', [
      'run',
      '--guard-alloc',
      '--reporter=dot',
      '--reporter=junit',
      `--outputFile.junit=${junit}`,
    ]);
    assertGuarded(r);
    assert.match(
      fs.readFileSync(junit, 'utf8'),
      /<testcase [^>]*name="writes into the alignment gap"[^>]*>\s*<failure/,
    );
    fs.rmSync(path.dirname(junit), { recursive: true, force: true });
  });

  test('mate-vitest list is no run: nothing to guard, nothing said', async () => {
    const r = await mateVitest('projects', ['list', '--guard-alloc']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /\[b\] gap\.test\.mjs > writes into the alignment gap/);
    assert.doesNotMatch(r.output, /\[mate-guard\] warning/);
  });
});

describe('one test file in two projects', () => {
  // projects-shared: inline projects a and b both include shared/overflow.test.mjs, whose overflow faults.
  test("each report names its project on the test line; each crash fails that project's test", async () => {
    const r = await mateVitest('projects-shared', ['run', '--guard-alloc']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Test Files +2 failed \(2\)/);
    assert.match(r.output, /Tests +2 failed \(2\)/);
    const crashes = [
      ...r.output.matchAll(
        /^\[mate-guard\] test worker (\d+) was killed by a guard fault: heap-buffer-overflow .* while running (\[[ab]\]) shared\/overflow\.test\.mjs > fillInclusive overflows by one; full report above, JSON in (\S+)$/gm,
      ),
    ];
    const byProject = new Map(crashes.map((m) => [m[2], m]));
    assert.deepEqual([...byProject.keys()].sort(), ['[a]', '[b]'], r.output);
    for (const [project, m] of byProject) {
      // The dying worker's own report names the same project's test.
      const json = JSON.parse(fs.readFileSync(m[3], 'utf8'));
      assert.equal(json.pid, Number(m[1]));
      assert.equal(json.test, `${project} shared/overflow.test.mjs > fillInclusive overflows by one`);
      // Vitest fails that project's test with it (its FAIL line shows the project as a badge).
      const fail = new RegExp(
        `FAIL .*\\b${project[1]}\\b.* shared/overflow\\.test\\.mjs.* > .*fillInclusive overflows by one\n(?:.*\n)*?\\[mate-guard\\] test worker ${m[1]} was killed`,
      );
      assert.match(r.output.replace(/\x1b\[[0-9;]*m/g, ''), fail);
    }
    assert.equal(summary(r.output).violations, 2, r.output);
  });
});

test('a file shared by two projects, damaged in one: mate-vitest reruns it in that project only', async () => {
  // projects-rerun: shared/gap.test.mjs runs in projects a and b, damages its buffer in b; each run writes its project to MARK.
  const mark = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-vitest-mark-')), 'runs');
  const r = await mateVitest('projects-rerun', ['run', '--guard-alloc'], { MARK: mark });
  assert.equal(r.code, 1, r.output);
  assert.match(
    r.output,
    /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in \[b\] shared\/gap\.test\.mjs > writeAt past the end into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
  );
  // The run itself in a and b, the rerun in b alone.
  assert.deepEqual(fs.readFileSync(mark, 'utf8').trim().split('\n').sort(), ['a', 'b', 'b'], r.output);
});

describe('--coverage: the summary still ends the output, after the coverage table', () => {
  const lastLines = (output) => output.trimEnd().split('\n').slice(-2);
  const assertAfterTable = (r) => {
    const table = r.output.lastIndexOf('All files |');
    assert.ok(table >= 0, `a coverage table:\n${r.output}`);
    assert.ok(r.output.indexOf('[mate-guard] summary:') > table, `the summary after the table:\n${r.output}`);
  };

  test('a clean run (plugin in the config): the table, then the summary as the last line', async () => {
    const r = await mateVitest('coverage', ['run', '--guard-alloc', '--coverage']);
    assert.equal(r.code, 0, r.output);
    assertAfterTable(r);
    assert.match(lastLines(r.output)[1], SUMMARY);
  });

  test('projects guarded from the root, a failing run with coverage.reportOnFailure: the table, the rerun, then the summary and its reports line', async () => {
    const r = await mateVitest('projects', [
      'run',
      '--guard-alloc',
      '--coverage',
      '--coverage.reportOnFailure',
      '--coverage.reporter=text',
    ]);
    assert.equal(r.code, 1, r.output);
    assertAfterTable(r);
    assert.ok(r.output.indexOf('[mate-guard] rerun in tail mode') > r.output.lastIndexOf('All files |'), r.output);
    const [sum, reports] = lastLines(r.output);
    assert.match(sum, SUMMARY);
    assert.match(reports, /^\[mate-guard\] reports: /);
  });
});

describe('precedence: flags > MATE_VITEST_GUARD_* > guardAlloc() options > off', () => {
  // The underflow shows the mode that won: head faults, tail damages a canary;
  // off: the tagged test runs (the bug itself runs only under guarding).
  const OFF = /RAN: guarding is off/;
  const assertOff = (r) => {
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, OFF);
    assert.deepEqual(reportLines(r.output), []);
    assert.doesNotMatch(r.output, /\[mate-guard\]/);
  };
  const HEAD = /ERROR: heap-buffer-underflow on WRITE/;
  const TAIL = /ERROR: canary-corruption: 1 byte before the start/;
  const opts = (o) => ({ FIXTURE_GUARD_OPTIONS: JSON.stringify(o) });

  test('off by default: the plugin alone only makes guarding available', async () => {
    assertOff(await vitest('options', ['run']));
  });

  test('options turn it on (a .ts config, default import)', async () => {
    const r = await vitest('options', ['run'], opts({ enabled: true, mode: 'head' }));
    assert.notEqual(r.code, 0);
    assert.match(r.output, HEAD);
  });

  test('env beats options', async () => {
    const r = await vitest('options', ['run'], {
      ...opts({ enabled: true, mode: 'head' }),
      MATE_VITEST_GUARD_MODE: 'tail',
    });
    assert.notEqual(r.code, 0);
    assert.match(r.output, TAIL);
    assertOff(await vitest('options', ['run'], { ...opts({ enabled: true }), MATE_VITEST_GUARD_ALLOC: 'off' }));
  });

  test('env alone turns guarding on', async () => {
    const r = await vitest('options', ['run'], { MATE_VITEST_GUARD_ALLOC: 'yes', MATE_VITEST_GUARD_MODE: 'head' });
    assert.notEqual(r.code, 0);
    assert.match(r.output, HEAD);
  });

  test('flags beat env: --guard-mode=head over MATE_VITEST_GUARD_MODE=tail, --guard-alloc over MATE_VITEST_GUARD_ALLOC=0', async () => {
    const r = await mateVitest('options', ['run', '--guard-alloc', '--guard-mode=head'], {
      MATE_VITEST_GUARD_ALLOC: '0',
      MATE_VITEST_GUARD_MODE: 'tail',
    });
    assert.notEqual(r.code, 0);
    assert.match(r.output, HEAD);
  });

  test('--no-guard-alloc beats env and options (mate-vitest and after -- on plain vitest)', async () => {
    for (const r of [
      await mateVitest('options', ['run', '--no-guard-alloc'], {
        ...opts({ enabled: true }),
        MATE_VITEST_GUARD_ALLOC: '1',
      }),
      await vitest('options', ['run', '--', '--no-guard-alloc'], {
        ...opts({ enabled: true }),
        MATE_VITEST_GUARD_ALLOC: '1',
      }),
    ])
      assertOff(r);
  });

  test('--guard-log-allocations logs each allocation; --no-guard-log-allocations beats the env', async () => {
    const on = await mateVitest('options', ['run', '--guard-alloc', '--guard-log-allocations']);
    assert.match(on.output, /^\[mate-guard\] alloc #\d+ ptr=0x[0-9a-f]+ requested=64 .*mode=tail/m);
    const off = await mateVitest('options', ['run', '--guard-alloc', '--no-guard-log-allocations'], {
      MATE_VITEST_GUARD_LOG_ALLOCATIONS: '1',
    });
    assert.match(off.output, TAIL);
    assert.doesNotMatch(off.output, /\[mate-guard\] alloc #/);
  });
});

describe('bad values stop the run before any test, naming the source and the value', () => {
  const cases = [
    [
      'mate-vitest --guard-mode sideways',
      () => mateVitest('options', ['run', '--guard-mode', 'sideways']),
      /--guard-mode: "sideways" is not a guard mode; use tail or head/,
    ],
    [
      'mate-vitest --guard-alloc=maybe',
      () => mateVitest('options', ['run', '--guard-alloc=maybe']),
      /--guard-alloc: "maybe" is not a boolean/,
    ],
    [
      'vitest -- --guard-mode=diagonal',
      () => vitest('options', ['run', '--', '--guard-mode=diagonal']),
      /--guard-mode: "diagonal" is not a guard mode/,
    ],
    [
      'MATE_VITEST_GUARD_ALLOC=perhaps',
      () => vitest('options', ['run'], { MATE_VITEST_GUARD_ALLOC: 'perhaps' }),
      /MATE_VITEST_GUARD_ALLOC: "perhaps" is not a boolean; use 1\/true\/yes\/on or 0\/false\/no\/off/,
    ],
    [
      'MATE_VITEST_GUARD_MODE=middle',
      () => mateVitest('options', ['run'], { MATE_VITEST_GUARD_MODE: 'middle' }),
      /MATE_VITEST_GUARD_MODE: "middle" is not a guard mode/,
    ],
    [
      'guardAlloc({ mode: "sideways" })',
      () => vitest('options', ['run'], { FIXTURE_GUARD_OPTIONS: '{"mode":"sideways"}' }),
      /guardAlloc\(\) options mode: "sideways" is not a guard mode/,
    ],
    [
      'guardAlloc({ enable: true })',
      () => vitest('options', ['run'], { FIXTURE_GUARD_OPTIONS: '{"enable":true}' }),
      /guardAlloc\(\) options: unknown option "enable"; did you mean enabled\?/,
    ],
  ];
  for (const [title, go, message] of cases) {
    test(title, async () => {
      const r = await go();
      assert.notEqual(r.code, 0, r.output);
      assert.match(r.output, message);
      assert.doesNotMatch(r.output, /Test Files|reverseFill/, 'no test may run');
    });
  }
});

test("mate-vitest --help lists the guard flags beside vitest's own", async () => {
  const r = await mateVitest('options', ['--help']);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /--reporter/);
  assert.match(r.output, /--guard-alloc\s+\[mate-guard\].*--no-guard-alloc turns it off.*MATE_VITEST_GUARD_ALLOC/);
  assert.match(r.output, /--guard-mode <tail\|head>\s+\[mate-guard\]/);
  assert.match(r.output, /--guard-log-allocations\s+\[mate-guard\]/);
});

test('mate-vitest warns when the config has no guardAlloc() plugin (the flags did nothing); told to guard, it fails the run (exit 2)', async () => {
  const r = await mateVitest('noplugin', ['run', '--guard-alloc', '--guard-mode=head']);
  assert.equal(r.code, 2, r.output);
  assert.match(r.output, /Tests +\d+ passed/);
  assert.match(
    r.output,
    /^\[mate-guard\] warning: --guard-alloc --guard-mode=head had no effect: the vitest config has no guardAlloc\(\) plugin/m,
  );
  assert.doesNotMatch(r.output, /\[mate-guard\] (summary|guarding on)/);
});

test('pool threads: a warning at start; a fault still prints its report and fails the run', async () => {
  const r = await vitest('threads', ['run', '--', '--guard-alloc']);
  assert.notEqual(r.code, 0, r.output);
  const warning = r.output.indexOf('[mate-guard] warning: pool "threads"');
  assert.ok(warning >= 0, r.output);
  assert.match(r.output, /a guard fault ends the whole run.*Use pool "forks"/);
  const rep = reportOf(r.output, 'ERROR: heap-buffer-overflow on WRITE');
  assert.ok(warning < r.output.indexOf('==mate-guard== ERROR'), 'the warning comes first');
  assert.match(rep, /^==mate-guard== test: overflow\.test\.mjs > fillInclusive overflows by one in a worker thread$/m);
});

test("pool threads, a fault: no summary can follow (the run's owner died); the dying process says so and where the reports are, which mate report sums up", async () => {
  for (const r of [
    await vitest('threads', ['run', '--', '--guard-alloc']),
    await mateVitest('threads', ['run', '--guard-alloc']),
  ]) {
    assert.notEqual(r.code, 0, r.output);
    const m =
      /^\[mate-guard\] the process that owned this run dies with it, so no summary follows; the reports stay in (\S+) \(mate report \S+ sums them up\)$/m.exec(
        r.output,
      );
    assert.ok(m, r.output);
    const report = await run(process.execPath, [MATE, 'report', m[1]]);
    assert.equal(report.code, 1, report.output);
    assert.match(
      report.output,
      /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, .*1 violation, 1 process died,/m,
    );
    fs.rmSync(m[1], { recursive: true, force: true });
  }
});
