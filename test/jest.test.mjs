// The Jest integration, end to end: the real jest 30, fixture suites that
// call the real examples addon, through `mate-jest` and plain `jest`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { assertGcSuiteGuarded } from './helpers/gc-suite.mjs';
import { accessSite, lineOf } from './helpers/native-frames.mjs';
import { firstAllocationFrame, MATE, rerunReportOf, reportLines, ROOT, run } from './helpers/run.mjs';

const MATE_JEST = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const suite = (name) => ['-c', path.join(ROOT, 'test', 'fixtures', 'jest', name, 'jest.config.js')];
const mateJest = (args, env) => run(process.execPath, [MATE_JEST, ...args], { env, timeout: 90_000 });
const jest = (args, env) => run(process.execPath, [JEST, ...args], { env, timeout: 90_000 });

const OVERFLOW_TEST = 'test/fixtures/jest/bugs/overflow.test.js > fill > fills one byte too many';
const UAF_TEST =
  'test/fixtures/jest/bugs/use-after-free.test.js > retained pointer > writes through a pointer to a freed buffer';
const GAP_TEST = 'test/fixtures/jest/bugs/gap.test.js > writeAt > writes into the alignment gap';
const UNDERFLOW_TEST = 'test/fixtures/jest/bugs/underflow.test.js > reverseFill > runs down to index -1';

/** `[mate-guard] alloc` lines for the probe's 4321-byte buffer. */
const probeAllocs = (output) =>
  output.split('\n').filter((l) => l.startsWith('[mate-guard] alloc') && l.includes('requested=4321'));
const summary = (output) => output.split('\n').find((l) => l.startsWith('[mate-guard] summary:'));
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const jsonResults = (stdout) => JSON.parse(stdout.slice(stdout.indexOf('{')));

describe('clean suite', () => {
  test('guarded in band: passes, no report, a summary line with guarded allocations', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('clean'), '-i']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /Tests: +54 passed, 54 total/);
    assert.deepEqual(reportLines(r.output), []);
    assert.match(
      summary(r.output) ?? '',
      /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*0 violations, 0 tests skipped by tag$/,
    );
  });

  test('--coverage (in band and with workers): the coverage table, then the summary as the last line', async () => {
    for (const band of [['-i'], ['--maxWorkers=2']]) {
      const r = await mateJest(['--guard-alloc', ...suite('clean'), ...band, '--coverage', '--coverageReporters=text']);
      assert.equal(r.code, 0, r.output);
      const table = r.output.lastIndexOf('All files');
      assert.ok(table >= 0, `a coverage table:\n${r.output}`);
      const lines = r.output.trimEnd().split('\n');
      assert.match(
        lines.at(-1),
        /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*0 violations, 0 tests skipped by tag$/,
        r.output,
      );
      assert.ok(r.output.lastIndexOf('[mate-guard] summary:') > table, r.output);
    }
  });

  test('unguarded: passes and mate-guard stays silent', async () => {
    const r = await mateJest([...suite('clean'), '-i']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /Tests: +54 passed, 54 total/);
    assert.doesNotMatch(r.output, /\[mate-guard\]|==mate-guard==/);
  });
});

describe('planted bugs', () => {
  test('in band, overflow by one: Jest dies, mate-jest names the test, exit non-zero', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('bugs'), 'overflow']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.output,
      /\[mate-guard\] Jest was killed before it could print its results: test files after this one did not run/,
    );
    const lines = reportLines(r.output);
    assert.match(
      lines[0],
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
    );
    assert.ok(lines.includes(`==mate-guard== test: ${OVERFLOW_TEST}`), r.output);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] the Jest process \\(in band\\) \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${OVERFLOW_TEST.replace(/[.>]/g, '\\$&')};`,
      ),
    );
    assert.match(summary(r.output) ?? '', /1 violation,/);
  });

  test('in band, use-after-free through a retained pointer', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('bugs'), 'use-after-free']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(256 bytes, tail mode\)/,
    );
    assert.ok(reportLines(r.output).includes(`==mate-guard== test: ${UAF_TEST}`), r.output);
    assert.match(
      r.output,
      /\[mate-guard\] the Jest process \(in band\) \d+ was killed by a guard fault: heap-use-after-free/,
    );
  });

  test('in band, --guard-mode head: the underflow faults at once', async () => {
    const r = await mateJest(['--guard-alloc', '--guard-mode', 'head', ...suite('bugs'), 'underflow']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
    );
    assert.ok(reportLines(r.output).includes(`==mate-guard== test: ${UNDERFLOW_TEST}`), r.output);
  });

  test('plain jest with the reporter, in band and with workers: damage a test does to buffers made before it (module code, beforeAll, an earlier test) fails that test', async () => {
    for (const band of [['-i'], ['-w', '2', '--workerIdleMemoryLimit=1GB']]) {
      const r = await jest([...suite('long-lived'), ...band, '--json'], { MATE_JEST_GUARD_ALLOC: '1' });
      assert.equal(r.code, 1, r.output);
      const results = new Map(jsonResults(r.stdout).testResults[0].assertionResults.map((a) => [a.title, a]));
      for (const [name, bytes] of [
        ['underflows the module buffer', '1 byte'],
        ['underflows the hook buffer', '2 bytes'],
        ['underflows the earlier test buffer', '3 bytes'],
      ]) {
        const t = results.get(name);
        assert.equal(t.status, 'failed', `${band}: ${name}`);
        const message = t.failureMessages.join('');
        assert.match(message, new RegExp(`ERROR: canary-corruption: ${bytes} before the start`), name);
        assert.ok(
          message.includes(`==mate-guard== test: test/fixtures/jest/long-lived/long-lived.test.js > ${name}\n`),
          message,
        );
      }
      assert.equal(results.get('makes a buffer for later').status, 'passed');
      assert.equal(results.get('a clean test after them').status, 'passed');
      assert.match(summary(r.output) ?? '', /, 3 violations,/, r.output);
    }
  });

  test('with workers: every bug reported with kind, allocation and test; crashes attributed; exit non-zero', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('bugs'), '-w', '2', '--workerIdleMemoryLimit=1GB']);
    assert.notEqual(r.code, 0);
    const out = r.output;
    // Faults kill their worker: Jest only says a worker was terminated.
    assert.match(out, /A jest worker process \(pid=\d+\) was terminated by another process: signal=SIGSEGV/);
    assert.match(out, /==mate-guard== ERROR: heap-buffer-overflow on WRITE .* allocation #\d+ \(64 bytes, tail mode\)/);
    assert.match(
      out,
      new RegExp(
        `\\[mate-guard\\] Jest worker \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${OVERFLOW_TEST.replace(/[.>]/g, '\\$&')};`,
      ),
    );
    assert.match(
      out,
      new RegExp(
        `\\[mate-guard\\] Jest worker \\d+ was killed by a guard fault: heap-use-after-free on allocation #\\d+ \\(\\d+ bytes, tail mode\\) while running ${UAF_TEST.replace(/[.>]/g, '\\$&')};`,
      ),
    );
    // Jest may not drain a dead worker's stderr: mate-jest prints each report again from its JSON.
    assert.match(
      out,
      /\[mate-guard\] its report, from that JSON file:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.match(
      out,
      /\[mate-guard\] its report, from that JSON file:\n==mate-guard== ERROR: heap-use-after-free on WRITE/,
    );
    // Canary damage fails the test that did it, with the report as the message.
    assert.match(
      out,
      /● writeAt › writes into the alignment gap\n\n\s+GuardViolationError: mate-guard found a memory violation:/,
    );
    assert.match(
      out,
      /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged/,
    );
    assert.ok(out.includes(`==mate-guard== test: ${GAP_TEST}`), out);
    assert.match(out, /● reverseFill › runs down to index -1/);
    assert.match(
      out,
      /==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
    );
    assert.ok(out.includes(`==mate-guard== test: ${UNDERFLOW_TEST}`), out);
    // The reporter mate-jest adds puts the crashed tests back into Jest's results: 2 crashed + 2 canary failures.
    assert.match(out, /Tests: +4 failed, 1 passed, 5 total/);
    assert.match(out, /● fill › fills one byte too many\n\n {4}==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
    assert.match(summary(out) ?? '', /4 violations,/);
    // Every report ends at the line that did it (canary damage through mate-jest's rerun).
    assert.match(out, accessSite('overflow'));
    assert.match(out, accessSite('use-after-free'));
    assert.match(rerunReportOf(out, 'head mode'), accessSite('underflow'));
    assert.match(rerunReportOf(out, 'tail mode with alignment 1'), accessSite('gap'));
    const overflow = out.slice(
      out.indexOf('[mate-guard] its report, from that JSON file:\n==mate-guard== ERROR: heap-buffer-overflow'),
    );
    assert.match(
      firstAllocationFrame(overflow),
      /^==mate-guard==   at .*test\/fixtures\/jest\/bugs\/overflow\.test\.js:\d+:\d+\)?$/,
      "the allocation stack starts at the test file's line",
    );
  });
});

describe('node flags (--expose-gc) reach Jest and its tests', () => {
  const GC_TEST = 'test/fixtures/jest/gc/gc.test.js > collects garbage with global.gc'; // calls global.gc

  test('node --expose-gc mate-jest: Jest runs with the flag (and the guard flags)', async () => {
    const r = await run(
      process.execPath,
      ['--expose-gc', MATE_JEST, '--guard-alloc', '--guard-mode=head', '--guard-log-allocations', ...suite('gc')],
      { timeout: 90_000 },
    );
    assertGcSuiteGuarded(r, GC_TEST);
  });

  test('plain node --expose-gc jest with MATE_JEST_GUARD_* and the reporter', async () => {
    const env = { MATE_JEST_GUARD_ALLOC: '1', MATE_JEST_GUARD_MODE: 'head', MATE_JEST_GUARD_LOG_ALLOCATIONS: '1' };
    const reporters = ['--reporters=default', '--reporters=@mate-guard/jest-env/reporter'];
    assertGcSuiteGuarded(
      await run(process.execPath, ['--expose-gc', JEST, ...suite('gc'), ...reporters], { env, timeout: 90_000 }),
      GC_TEST,
    );
  });
});

describe('CI flags and shards', () => {
  test('mate-jest --watchAll=false --ci (the usual CI call) is not watch mode: the in-band crash is named, with the summary', async () => {
    const r = await mateJest(['--guard-alloc', '--watchAll=false', '--ci', ...suite('bugs'), 'overflow']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] the Jest process \\(in band\\) \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${OVERFLOW_TEST.replace(/[.>]/g, '\\$&')};`,
      ),
    );
    assert.match(summary(r.output) ?? '', /1 violation,/);
  });

  test("README's CI advice: with one file -w 2 still runs in band; --workerIdleMemoryLimit keeps a worker, so Jest shows the crashed file", async () => {
    const w2 = await mateJest(['--guard-alloc', '-w', '2', ...suite('bugs'), 'overflow']);
    assert.match(w2.output, /\[mate-guard\] the Jest process \(in band\) \d+ was killed/);
    const limit = await mateJest(['--guard-alloc', '--workerIdleMemoryLimit=1GB', ...suite('bugs'), 'overflow']);
    assert.equal(limit.code, 1, limit.output);
    assert.match(limit.output, /\[mate-guard\] Jest worker \d+ was killed by a guard fault: heap-buffer-overflow/);
    assert.match(limit.output, /Tests: +1 failed, 1 total/);
  });

  test("a sharded run's canary rerun drops --shard (keeping -w 2 with its value) and faults at the bad write", async () => {
    // 'overflow.test' matches overflow.test.js and gap-overflow.test.js; Jest's shard 2/2 of the two is
    // gap-overflow.test.js alone (it sorts them by a hash of the path), and of that file alone, nothing.
    const r = await mateJest([
      '--guard-alloc',
      '-c',
      'examples/jest/jest.config.js',
      '--shard=2/2',
      '-w',
      '2',
      'overflow.test',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Tests: +1 failed, 1 total/);
    assert.match(
      r.output,
      /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in examples\/jest\/gap-overflow\.test\.js > writeAt > writes the last byte of a 13-byte record faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
  });
});

describe('canary damage: mate-jest reruns the file in the faulting mode', () => {
  test("the rerun's fault report follows the canary report; the exit code stays failing", async () => {
    const r = await mateJest(['--guard-alloc', ...suite('bugs'), 'underflow', 'gap']);
    assert.notEqual(r.code, 0, r.output);
    assert.match(r.output, /\[mate-guard\] rerunning test\/fixtures\/jest\/bugs\/underflow\.test\.js in head mode/);
    assert.ok(
      r.output.includes(`[mate-guard] rerun in head mode: the canary-corruption of allocation #`) &&
        r.output.includes(
          `in ${UNDERFLOW_TEST} faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE`,
        ),
      r.output,
    );
    assert.ok(
      r.output.includes(
        `in ${GAP_TEST} faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE`,
      ),
      r.output,
    );
    assert.match(summary(r.output) ?? '', /2 violations,/);
  });

  test('MATE_JEST_GUARD_RERUN=0 turns it off', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('bugs'), 'underflow'], { MATE_JEST_GUARD_RERUN: '0' });
    assert.notEqual(r.code, 0, r.output);
    assert.match(r.output, /canary-corruption: 1 byte before the start/);
    assert.doesNotMatch(r.output, /\[mate-guard\] rerun/);
  });
});

test('a TypeScript test under ts-jest: the allocation stack starts at the .ts source line', async () => {
  const file = path.join(ROOT, 'test', 'fixtures', 'jest', 'typescript', 'overflow.test.ts');
  const line = lineOf(file, 'ALLOCATES HERE');
  const r = await mateJest(['--guard-alloc', ...suite('typescript')]);
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    firstAllocationFrame(r.output),
    new RegExp(`^==mate-guard==   at makeBuffer \\(.*overflow\\.test\\.ts:${line}:\\d+\\)$`),
    r.output,
  );
  assert.match(r.output, accessSite('overflow'));
});

describe('tags', () => {
  const TAGGED = [
    'tagged single test',
    'graph capture test',
    'first in block',
    'second in block',
    'each row 1',
    'each row 2',
    'inside a',
    'inside b',
    'whole file tagged by docblock',
    'whole file tagged graph-capture by docblock',
  ];
  const graphTagged = (title) => title === 'graph capture test' || title.includes('graph-capture');
  const INCOMPATIBLE = 'guard allocator debug mode does not support this test (tagged guard_incompatible)';
  const GRAPH = 'guard allocator debug mode does not support graph capture';

  test('guarded: tagged tests are skipped (never passed) with the reason in the name', async () => {
    const r = await mateJest(['--guard-alloc', ...suite('tags'), '--json', '-i']);
    assert.equal(r.code, 0, r.output);
    const results = jsonResults(r.stdout).testResults.flatMap((f) => f.assertionResults);
    for (const title of TAGGED) {
      const res = results.find((a) => a.title.startsWith(`${title} [skipped: `));
      assert.ok(res, `${title} not reported with a skip reason`);
      assert.equal(res.status, 'pending', `${title}: ${res.status}`);
      assert.equal(res.title, `${title} [skipped: ${graphTagged(title) ? GRAPH : INCOMPATIBLE}]`);
    }
    for (const title of ['untagged test runs', 'runs under guard too']) {
      assert.equal(results.find((a) => a.title === title)?.status, 'passed', title);
    }
    assert.match(summary(r.output) ?? '', /, 10 tests skipped by tag$/);
  });

  test('unguarded: the same tests run and pass', async () => {
    const r = await mateJest([...suite('tags'), '--json', '-i']);
    assert.equal(r.code, 0, r.output);
    const results = jsonResults(r.stdout).testResults.flatMap((f) => f.assertionResults);
    assert.equal(results.length, 12);
    for (const res of results) assert.equal(res.status, 'passed', res.title);
    assert.doesNotMatch(r.output, /skipped:|\[mate-guard\]|==mate-guard==/);
  });
});

describe('settings: flag > MATE_JEST_GUARD_* > testEnvironmentOptions > off', () => {
  const options = [
    '--testEnvironmentOptions',
    JSON.stringify({ guardAlloc: true, guardMode: 'head', guardLogAllocations: true }),
  ];
  const probe = [...suite('probe'), 'probe.test'];

  test('off by default', async () => {
    const r = await mateJest(probe);
    assert.equal(r.code, 0, r.output);
    assert.equal(probeAllocs(r.output).length, 0);
    assert.equal(summary(r.output), undefined);
  });

  test('testEnvironmentOptions turn it on', async () => {
    const r = await mateJest([...probe, ...options]);
    assert.equal(r.code, 0, r.output);
    assert.match(
      probeAllocs(r.output)[0] ?? '',
      /mode=head .*test="test\/fixtures\/jest\/probe\/probe.test.js > allocates one buffer"/,
    );
  });

  test('MATE_JEST_GUARD_MODE beats the options; the flag beats the variable', async () => {
    const env = { MATE_JEST_GUARD_MODE: 'tail' };
    const viaEnv = await mateJest([...probe, ...options], env);
    assert.equal(viaEnv.code, 0, viaEnv.output);
    assert.match(probeAllocs(viaEnv.output)[0] ?? '', /mode=tail/);
    const viaFlag = await mateJest(['--guard-mode', 'head', ...probe, ...options], env);
    assert.equal(viaFlag.code, 0, viaFlag.output);
    assert.match(probeAllocs(viaFlag.output)[0] ?? '', /mode=head/);
  });

  test('--no-guard-alloc beats MATE_JEST_GUARD_ALLOC=1; MATE_JEST_GUARD_LOG_ALLOCATIONS=off beats the options', async () => {
    const off = await mateJest(['--no-guard-alloc', ...probe, ...options], { MATE_JEST_GUARD_ALLOC: '1' });
    assert.equal(off.code, 0, off.output);
    assert.equal(summary(off.output), undefined);
    const quiet = await mateJest([...probe, ...options], { MATE_JEST_GUARD_LOG_ALLOCATIONS: 'off' });
    assert.equal(quiet.code, 0, quiet.output);
    assert.equal(probeAllocs(quiet.output).length, 0);
    assert.match(summary(quiet.output) ?? '', /[1-9]\d* allocations guarded/);
  });

  test('env alone works with plain jest; --guard-log-allocations through mate-jest', async () => {
    const plain = await jest(probe, { MATE_JEST_GUARD_ALLOC: 'yes', MATE_JEST_GUARD_LOG_ALLOCATIONS: 'true' });
    assert.equal(plain.code, 0, plain.output);
    assert.match(probeAllocs(plain.output)[0] ?? '', /mode=tail/);
    const flags = await mateJest(['--guard-alloc', '--guard-log-allocations', ...probe]);
    assert.equal(flags.code, 0, flags.output);
    assert.equal(probeAllocs(flags.output).length, 1);
  });

  test('a file docblock (@jest-environment-options) sets options for that file', async () => {
    const r = await mateJest([...suite('probe'), 'docblock-options']);
    assert.equal(r.code, 0, r.output);
    assert.match(probeAllocs(r.output)[0] ?? '', /mode=head .*docblock-options.test.js > allocates one buffer/);
  });
});

describe('bad values stop the run before any test', () => {
  const probe = [...suite('probe'), 'probe.test'];
  const noTestRan = (r) => assert.doesNotMatch(r.output, /Tests: +\d+ passed|✓/);

  test('a bad flag value names the flag and the value', async () => {
    const r = await mateJest(['--guard-mode', 'middle', ...probe]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /mate-jest: --guard-mode: "middle" is not a guard mode; use tail or head/);
    noTestRan(r);
    const missing = await mateJest(['--guard-mode']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--guard-mode needs a value: tail or head/);
  });

  test('a bad variable names the variable and the value (mate-jest and plain jest)', async () => {
    const r = await mateJest(probe, { MATE_JEST_GUARD_ALLOC: 'maybe' });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /MATE_JEST_GUARD_ALLOC: "maybe" is not a boolean; use 1\/true\/yes\/on or 0\/false\/no\/off/,
    );
    noTestRan(r);
    const plain = await jest(probe, { MATE_JEST_GUARD_MODE: 'sideways' });
    assert.notEqual(plain.code, 0);
    assert.match(
      plain.output,
      /Test suite failed to run\s+GuardConfigError: MATE_JEST_GUARD_MODE: "sideways" is not a guard mode; use tail or head/,
    );
    noTestRan(plain);
  });

  test('a run-wide setting in testEnvironmentOptions (per file) says where it belongs', async () => {
    const r = await mateJest(['--guard-alloc', ...probe, '--testEnvironmentOptions', '{"guardSuppressions":"x.supp"}']);
    assert.equal(r.code, 2, r.output);
    assert.match(
      r.output,
      /^mate-guard: testEnvironmentOptions guardSuppressions: suppressions is set once for the whole run, before any test file starts; give it to the reporter/m,
    );
    noTestRan(r);
  });

  test('a bad testEnvironmentOptions value names the option and the value', async () => {
    const r = await mateJest([...probe, '--testEnvironmentOptions', '{"guardAlloc":"perhaps"}']);
    assert.equal(r.code, 2, r.output);
    assert.match(r.output, /^mate-guard: testEnvironmentOptions guardAlloc: "perhaps" is not a boolean/m);
    noTestRan(r);
  });
});

test('files of one process asking for different modes: the later one fails with a clear message', async () => {
  const r = await mateJest([...suite('modes'), '-i'], { MATE_JEST_GUARD_ALLOC: '1' });
  assert.notEqual(r.code, 0);
  const conflicts = r.output.match(/already guards with guardMode "(tail|head)"/g) ?? [];
  assert.equal(conflicts.length, 1, r.output);
  assert.match(r.output, /Set one configuration for the whole run/);
  assert.match(r.output, /Tests: +1 passed, 1 total/);
});

test("mate-jest --help lists the guard flags, then Jest's own", async () => {
  const r = await mateJest(['--help']);
  assert.equal(r.code, 0, r.output);
  for (const flag of [
    '--guard-alloc, --no-guard-alloc',
    '--guard-mode <tail|head>',
    '--guard-log-allocations, --no-guard-log-allocations',
  ]) {
    assert.ok(r.stdout.includes(flag), flag);
  }
  assert.match(r.stdout, /env MATE_JEST_GUARD_ALLOC/);
  assert.match(r.stdout, /--testEnvironmentOptions/); // from jest --help
});

describe('a config that names no mate-guard environment', () => {
  const noEnv = ['-c', path.join(ROOT, 'test', 'fixtures', 'jest', 'no-env', 'jest.config.js')];
  const NOTHING =
    /^\[mate-guard\] warning: guarding was asked for, but no test process was guarded \(nothing installed the guard allocator\): /m;

  test('mate-jest --guard-alloc supplies the environment (wrapping node) and the reporter: guarded, the crash named', async () => {
    const r = await mateJest(['--guard-alloc', ...noEnv]);
    assert.notEqual(r.code, 0, r.output);
    assert.ok(reportLines(r.output).includes(`==mate-guard== test: ${OVERFLOW_TEST}`), r.output);
    assert.match(
      summary(r.output) ?? '',
      /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*1 violation, 1 process died, /,
    );
    const clean = await mateJest(['--guard-alloc', ...noEnv, '--maxWorkers=2', '--workerIdleMemoryLimit=1GB', 'clean']);
    assert.equal(clean.code, 0, clean.output);
    assert.match(clean.output, /Tests: +18 passed, 18 total/);
    assert.match(
      summary(clean.output) ?? '',
      /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*0 violations, 0 tests skipped by tag$/,
    );
  });

  test('a run that guarded nothing says so in one line, with the fix; mate-jest, told to guard, fails it (exit 2), plain jest with the reporter does not', async () => {
    const only = ['--testMatch', '<rootDir>/no-env/other-env.test.js'];
    const r = await mateJest(['--guard-alloc', ...noEnv, ...only]);
    assert.equal(r.code, 2, r.output);
    assert.match(r.output, /Tests: +\d+ passed/);
    assert.match(r.output, NOTHING);
    assert.match(r.output, /remove a `@jest-environment` docblock/);
    assert.equal(summary(r.output), undefined);
    const plain = await jest(
      [...noEnv, ...only, '--reporters', 'default', '--reporters', '@mate-guard/jest-env/reporter'],
      { MATE_JEST_GUARD_ALLOC: '1' },
    );
    assert.equal(plain.code, 0, plain.output);
    assert.match(plain.output, NOTHING);
    assert.match(plain.output, /set testEnvironment: '@mate-guard\/jest-env' in the Jest config/);
  });
});

describe('plain jest in one process, with the reporter', () => {
  test('a clean run leaves no report folder behind (the exit hook no longer writes into the removed one)', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-jest-tmp-'));
    try {
      const r = await jest(
        [...suite('clean'), '-i', '--reporters=default', '--reporters=@mate-guard/jest-env/reporter'],
        { MATE_JEST_GUARD_ALLOC: '1', TMPDIR: tmp },
      );
      assert.equal(r.code, 0, r.output);
      assert.match(summary(r.output) ?? '', /^\[mate-guard\] summary: [1-9]\d* allocations guarded, .*0 violations/);
      // The per-user parent (<tmp>/mate-guard-<uid>/, private) stays, empty: nothing of the run is left in it.
      const own = `mate-guard-${process.getuid()}`;
      const left = fs.readdirSync(tmp).filter((f) => f.startsWith('mate-guard-'));
      assert.deepEqual(
        left.flatMap((f) => (f === own ? fs.readdirSync(path.join(tmp, f)).map((g) => `${f}/${g}`) : [f])),
        [],
      );
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('a death at exit, after Jest showed its results (in band)', () => {
  test('mate-jest names the death, but neither says later files did not run nor prints again the report Jest showed', async () => {
    // a-canary: canary damage Jest shows with its failed test; b-exit: passes, its process aborts 3 s later.
    const r = await mateJest(['--guard-alloc', '--no-guard-rerun', '-i', ...suite('exit-death')]);
    assert.equal(r.code, 134, r.output);
    assert.match(r.output, /Tests: +1 failed, 1 passed, 2 total/);
    assert.match(
      r.output,
      /\[mate-guard\] the Jest process \(in band\) \d+ died of SIGABRT: deadly-signal outside any test/,
    );
    assert.doesNotMatch(r.output, /test files after this one did not run/);
    assert.doesNotMatch(r.output, /the runner never showed it/);
    assert.equal(
      r.output.split('\n').filter((l) => /==mate-guard== ERROR: canary-corruption/.test(l)).length,
      1,
      r.output,
    );
  });
});

describe('reports a test got before a guard fault killed its process', () => {
  const REPORTER = path.join(ROOT, 'packages', 'jest-env', 'dist', 'reporter', 'reporter.js');
  const canaryLines = (output) =>
    output.split('\n').filter((l) => /==mate-guard== ERROR: canary-corruption/.test(l)).length;

  test('one Jest showed with an earlier file (in band) is not called unshown, nor printed again', async () => {
    // Before: the dying process said "the runner never showed it" and printed a-canary's report a second time.
    for (const r of [
      await jest(['-i', ...suite('shown-then-fault')], { MATE_JEST_GUARD_ALLOC: '1' }),
      await mateJest(['--guard-alloc', '--no-guard-rerun', '-i', ...suite('shown-then-fault')]),
    ]) {
      assert.notEqual(r.code, 0, r.output);
      assert.match(r.output, /● writes into the alignment gap/);
      assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
      assert.doesNotMatch(r.output, /the runner never showed it/);
      assert.equal(canaryLines(r.output), 1, r.output);
    }
  });

  test("plain jest with the reporter and workers: the crashed file's earlier failure is shown and back in the results", async () => {
    // Before: counted in the summary (2 violations) but never shown, and missing from Jest's results.
    const r = await jest(
      [
        ...suite('earlier-then-fault'),
        '-w',
        '2',
        '--workerIdleMemoryLimit=1GB',
        '--json',
        '--reporters',
        'default',
        '--reporters',
        REPORTER,
      ],
      { MATE_JEST_GUARD_ALLOC: '1' },
    );
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Jest worker \d+ gave its test runner a report before the guard fault killed it/);
    assert.match(
      r.output,
      /==mate-guard== ERROR: canary-corruption: \d+ bytes? past the end of allocation #\d+ \(13 bytes/,
    );
    assert.match(summary(r.output) ?? '', /2 violations,/);
    const tests = jsonResults(r.stdout).testResults.flatMap((f) => f.assertionResults);
    assert.deepEqual(
      tests.map((t) => [t.title, t.status]),
      [
        ['writes into the alignment gap', 'failed'],
        ['writes one byte past the end', 'failed'],
      ],
    );
    assert.match(tests[0].failureMessages[0], /^==mate-guard== ERROR: canary-corruption/);
    assert.match(
      tests[0].failureMessages[0],
      /before a guard fault killed Jest worker \d+, which took its result with it/,
    );
  });
});

describe('plain jest with the environment but no reporter', () => {
  const envOnly = ['-c', path.join(ROOT, 'test', 'fixtures', 'jest', 'clean', 'jest.config.js'), 'clean-[12]'];
  const NOTE =
    "[mate-guard] guarding is on (@mate-guard/jest-env); the summary line and the names of tests whose worker a guard fault killed come from the reporter: add reporters: ['default', '@mate-guard/jest-env/reporter'] to your Jest config, or run mate-jest";
  const count = (output) => output.split('\n').filter((l) => l === NOTE).length;

  test('says once per run that guarding is on and where the summary comes from (in band and with two workers); a clean run leaves nothing in the temporary folder', async () => {
    // A temporary folder of its own: each process's report folder goes in <tmp>/mate-guard-<uid>/, and goes at exit when clean.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-jest-env-only-'));
    const inBand = await jest([...envOnly, '-i'], { MATE_JEST_GUARD_ALLOC: '1', TMPDIR: tmp });
    assert.equal(inBand.code, 0, inBand.output);
    assert.equal(count(inBand.output), 1, inBand.output);
    const workers = await jest([...envOnly, '--maxWorkers=2', '--workerIdleMemoryLimit=1GB'], {
      MATE_JEST_GUARD_ALLOC: '1',
      TMPDIR: tmp,
    });
    assert.equal(workers.code, 0, workers.output);
    assert.equal(count(workers.output), 1, workers.output);
    const own = path.join(tmp, `mate-guard-${process.getuid()}`);
    assert.equal(fs.statSync(own).mode & 0o777, 0o700, 'the per-user folder is private');
    assert.deepEqual(fs.readdirSync(own), [], 'no counters, markers or folders left behind');
    const off = await jest([...envOnly, '-i']);
    assert.equal(count(off.output), 0, 'silent when guarding is off');
  });
});

describe('one test file in two Jest projects (projects with displayName)', () => {
  // projects: projects a and b both match shared/overflow.test.js, whose overflow faults in each project's worker.
  const SHARED = 'test/fixtures/jest/projects/shared/overflow.test.js > fill > fills one byte too many';
  test("each report names its project on the test line; each crash fails that project's test", async () => {
    const r = await mateJest(['--guard-alloc', ...suite('projects'), '--workerIdleMemoryLimit=1GB', 'overflow']);
    assert.equal(r.code, 1, r.output);
    const out = r.output.replace(/\x1b\[[0-9;]*m/g, '');
    assert.match(out, /Tests: +2 failed, 2 total/);
    for (const p of ['a', 'b']) {
      assert.match(out, new RegExp(`^==mate-guard== test: \\[${p}\\] ${escape(SHARED)}$`, 'm'));
      // Jest's FAIL block of project p: its crashed test, with p's crash (not the other project's).
      const block = out.split(/^(?=FAIL |Test Suites:)/m).find((b) => b.startsWith(`FAIL ${p} `));
      assert.ok(block, `a FAIL block for project ${p}:\n${out}`);
      assert.match(block, /● fill › fills one byte too many/);
      assert.match(
        block,
        new RegExp(`killed by a guard fault: heap-buffer-overflow .* while running \\[${p}\\] ${escape(SHARED)};`),
      );
      assert.doesNotMatch(block, new RegExp(`while running \\[${p === 'a' ? 'b' : 'a'}\\]`));
    }
    assert.match(summary(r.output), /2 violations, 2 processes died/);
  });

  // shared/gap.test.js damages memory in project b only; each run of it writes its project to MARK.
  const GAP = 'test/fixtures/jest/projects/shared/gap.test.js > writeAt > writes into the alignment gap';
  const marks = (file) => fs.readFileSync(file, 'utf8').trim().split('\n').sort();
  test('canary damage in one project: the rerun and mate replay run the file in that project only', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-jest-projects-'));
    const mark = path.join(dir, 'runs');
    const reports = path.join(dir, 'reports');
    const r = await mateJest(['--guard-alloc', '--guard-report-dir', reports, ...suite('projects'), 'gap'], {
      MARK: mark,
    });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      new RegExp(
        `rerun in tail mode with alignment 1: the canary-corruption of allocation #\\d+ \\(13 bytes, tail mode\\) in \\[b\\] ${escape(GAP)} faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE`,
      ),
    );
    // The run itself in a and b, the rerun in b alone (--selectProjects=b).
    assert.deepEqual(marks(mark), ['a', 'b', 'b'], r.output);

    fs.rmSync(mark);
    const [recorded] = fs.readdirSync(reports);
    const replay = await run(process.execPath, [MATE, 'replay', path.join(reports, recorded), '--alignment', '1'], {
      env: { MARK: mark },
      timeout: 90_000,
    });
    assert.match(
      replay.output,
      /^\[mate-guard\] replay runs in .* --runTestsByPath -t '\^\(\?:writeAt writes into the alignment gap\)\$' --selectProjects=b$/m,
      replay.output,
    );
    assert.match(
      replay.output,
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/,
    );
    assert.deepEqual(marks(mark), ['b'], replay.output);
  });
});
