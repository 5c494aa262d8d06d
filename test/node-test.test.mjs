// @mate-guard/node-test against the real `node --test` and the real
// examples addon: what a user sees (exit code, report, test status in
// node's spec/junit reporters, skip reason, summary line).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { Parser } from 'tap-parser';

import { assertGcSuiteGuarded } from './helpers/gc-suite.mjs';
import { accessSite } from './helpers/native-frames.mjs';
import { MATE, rerunReportOf, ROOT, run, startWatch } from './helpers/run.mjs';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'node-test');
const MATE_NODE_TEST = path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js');
const REQUIRE = ['--test', '--require', '@mate-guard/node-test', '--test-reporter=spec'];
const CLEAN = ['clean/clean.test.mjs', 'clean/tagged.test.cjs'];
const ON = { MATE_NODE_TEST_GUARD_ALLOC: '1' };

const node = (args, opts = {}) => run(process.execPath, args, { cwd: FIXTURES, ...opts });
const mateNodeTest = (args, opts = {}) =>
  run(process.execPath, [MATE_NODE_TEST, '--test-reporter=spec', ...args], { cwd: FIXTURES, ...opts });

const SKIP_INCOMPATIBLE = '﹣ needs unguarded memory';
const REASON_INCOMPATIBLE = '# guard allocator debug mode does not support this test (tagged guard_incompatible)';

function summaries(output) {
  return output
    .split('\n')
    .filter((l) => l.startsWith('[mate-guard] summary:'))
    .map((line) => {
      const m =
        /^\[mate-guard\] summary: (\d+) allocations? guarded, peak live (\d+), (\d+) unguarded fallbacks?, (\d+) violations?, (?:(\d+) process(?:es)? died, )?(\d+) tests? skipped by tag$/.exec(
          line,
        );
      assert.ok(m, `unexpected summary line: ${line}`);
      return {
        allocations: +m[1],
        peakLive: +m[2],
        fallbacks: +m[3],
        violations: +m[4],
        died: +(m[5] ?? 0),
        skippedByTag: +m[6],
      };
    });
}

function summary(output) {
  const all = summaries(output);
  assert.equal(all.length, 1, `expected one summary line in:\n${output}`);
  return all[0];
}

function assertGuardedClean(r) {
  assert.equal(r.code, 0, r.output);
  assert.doesNotMatch(r.output, /==mate-guard==/);
  assert.ok(r.output.includes(`${SKIP_INCOMPATIBLE}`) && r.output.includes(REASON_INCOMPATIBLE), r.output);
  assert.match(r.output, /﹣ graph capture \([\d.]+ms\) # guard allocator debug mode does not support graph capture/);
  assert.doesNotMatch(r.output, /RAN:/);
  assert.match(r.output, /ℹ pass 7\n/);
  const s = summary(r.output);
  assert.ok(s.allocations > 0, 'buffers were guarded');
  assert.equal(s.violations, 0);
  assert.equal(s.skippedByTag, 2);
}

/** The failure block node's spec reporter prints for a test under "failing tests:". */
function failureOf(output, title) {
  const tail = output.slice(output.indexOf('✖ failing tests:'));
  const start = tail.indexOf(`✖ ${title}`);
  assert.ok(start >= 0, `no failure for "${title}" in:\n${output}`);
  const next = tail.slice(start + 1).search(/\ntest at /);
  return next < 0 ? tail.slice(start) : tail.slice(start, start + 1 + next);
}

const OVERFLOW_TEST = 'fault/overflow.test.mjs > overflow > fills one byte too far';

describe('node --test --require @mate-guard/node-test', () => {
  test('clean files: pass guarded with no report; tagged tests skipped with the reason; one summary line', async () => {
    assertGuardedClean(await node([...REQUIRE, ...CLEAN], { env: ON }));
  });

  test('guarding off by default: tagged tests run, no summary', async () => {
    const r = await node([...REQUIRE, ...CLEAN]);
    assert.equal(r.code, 0, r.output);
    for (const ran of ['RAN: needs unguarded memory', 'RAN: captures a graph'])
      assert.ok(r.output.includes(ran), `${ran} missing:\n${r.output}`);
    assert.doesNotMatch(r.output, /skipped by|\[mate-guard\]|==mate-guard==/);
  });

  test('canary damage fails exactly the test that did it, named file > suite > test', async () => {
    const r = await node([...REQUIRE, 'canary/canary.test.cjs', 'canary/nested.test.mjs'], { env: ON });
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /✔ passes before the bugs/);
    assert.match(r.output, /✔ passes after the bugs/);
    const under = failureOf(r.output, 'underflows by one');
    assert.match(
      under,
      /==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
    );
    assert.match(under, /==mate-guard== test: canary\/canary\.test\.cjs > canary damage > underflows by one\n/);
    assert.match(
      under,
      /==mate-guard== allocated at:\n\s*==mate-guard==   at TestContext\.<anonymous> \(.*canary\/canary\.test\.cjs:13:\d+\)\n\s*==mate-guard==   … \d+ runner frames/,
      "the allocation stack starts at the test's line, plugin frames dropped",
    );
    const gap = failureOf(r.output, 'overflows into the alignment gap');
    assert.match(gap, /canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged/);
    // A subtest is named with its parent; the parent passes (the damage is not its own).
    const inner = failureOf(r.output, 'inner damages');
    assert.match(inner, /==mate-guard== test: canary\/nested\.test\.mjs > outer > inner damages\n/);
    const cb = failureOf(r.output, 'damages in a done-callback test');
    assert.match(cb, /canary-corruption: 3 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/);
    assert.match(r.output, /ℹ fail 5\n/, 'four damaging tests and the parent of the failed subtest');
    assert.equal(summary(r.output).violations, 4);
  });

  test('damage a test does to buffers made before it (module code, before(), an earlier test) fails that test', async () => {
    const r = await node([...REQUIRE, 'canary/long-lived.test.cjs'], { env: ON });
    assert.equal(r.code, 1, r.output);
    for (const [name, bytes] of [
      ['underflows the module buffer', '1 byte'],
      ['underflows the hook buffer', '2 bytes'],
      ['underflows the earlier test buffer', '3 bytes'],
    ]) {
      const f = failureOf(r.output, name);
      assert.match(f, new RegExp(`ERROR: canary-corruption: ${bytes} before the start`), name);
      assert.ok(f.includes(`==mate-guard== test: canary/long-lived.test.cjs > long-lived buffers > ${name}\n`), f);
    }
    assert.match(r.output, /✔ makes a buffer for later/);
    assert.match(r.output, /✔ a clean test after them/);
    assert.equal(summary(r.output).violations, 3);
  });

  test("a fault kills one file's process: that test fails with its report, the other files run, the summary counts the dead process", async () => {
    const r = await node([...REQUIRE, 'fault/overflow.test.mjs', ...CLEAN], { env: ON });
    assert.equal(r.code, 1, r.output);
    // The dying process printed the report itself, naming the test.
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    );
    assert.ok(r.output.includes(`==mate-guard== test: ${OVERFLOW_TEST}\n`), r.output);
    assert.match(r.output, accessSite('overflow'));
    assert.doesNotMatch(r.output, /RAN: is never reached/);
    // node's own results hold the crashed test, failed, inside its suite, with the report.
    assert.match(
      r.output,
      /▶ overflow\n {2}✖ fills one byte too far\n {4}\[Error \[GuardFaultError\]: ==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    const crash = failureOf(r.output, 'fills one byte too far');
    assert.match(
      crash,
      new RegExp(
        `\\[mate-guard\\] node:test process \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${OVERFLOW_TEST}`,
      ),
    );
    // The run went on.
    assert.match(r.output, /✔ clean addon use/);
    assert.match(r.output, /✔ untagged test runs/);
    const s = summary(r.output);
    assert.equal(s.violations, 1);
    assert.equal(s.died, 1);
    assert.equal(s.skippedByTag, 2);
  });

  test('damage outside any test (a before hook) fails the file at its end, never a test', async () => {
    const r = await node([...REQUIRE, 'outside/hook.test.cjs'], { env: ON });
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /✔ first test after the hook/);
    assert.match(
      r.output,
      /outside any test \(module code or beforeAll\/afterAll hooks of this file\): mate-guard found a memory violation:\n\s*==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(29 bytes, tail mode\)/,
    );
    assert.match(r.output, /✖ .*outside\/hook\.test\.cjs/);
    assert.equal(summary(r.output).violations, 1);
  });

  test('a report the dead process gave an earlier test, which node never received, is put back too, in the same suite', async () => {
    const r = await node([...REQUIRE, 'native/native-heap.test.cjs'], {
      env: { ...ON, MATE_NODE_TEST_GUARD_NATIVE: '*buggy_addon.node' },
    });
    assert.equal(r.code, 1, r.output);
    const results = r.stdout.slice(r.stdout.indexOf('▶ native heap'), r.stdout.indexOf('ℹ tests'));
    assert.match(
      results,
      /^▶ native heap\n {2}✖ frees twice\n {4}\[Error \[GuardFaultError\]: ==mate-guard== ERROR: double-free of 0x/,
    );
    assert.match(
      results,
      /\(this test failed with it before a guard fault killed node:test process \d+, which took its result with it\)\]\n\n {2}✖ overflows a malloc block\n {4}\[Error \[GuardFaultError\]: ==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.equal((results.match(/▶ native heap/g) ?? []).length, 1, 'one suite holds both');
    const s = summary(r.output);
    assert.equal(s.violations, 2);
    assert.equal(s.died, 1);
  });

  test('--test-reporter=junit carries the crashed test as a failure with its report', async () => {
    const r = await node(
      ['--test', '--require', '@mate-guard/node-test', '--test-reporter=junit', 'fault/overflow.test.mjs'],
      { env: ON },
    );
    assert.equal(r.code, 1, r.output);
    assert.match(r.stdout, /<testsuite name="overflow"[^>]* failures="1"/);
    assert.match(
      r.stdout,
      /<testcase name="fills one byte too far"[^\n]*\n\s*<failure type="testCodeFailure" message="==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
  });

  test("--import: every file's process is guarded (Node 20 does not load it in the main process: a summary per file says so)", async () => {
    const r = await node(
      [
        '--test',
        '--import',
        '@mate-guard/node-test',
        '--test-reporter=spec',
        'canary/canary.test.cjs',
        'clean/tagged.test.cjs',
      ],
      { env: ON },
    );
    assert.equal(r.code, 1, r.output);
    assert.match(
      failureOf(r.output, 'underflows by one'),
      /==mate-guard== test: canary\/canary\.test\.cjs > canary damage > underflows by one\n/,
    );
    assert.match(r.output, /﹣ graph capture \([\d.]+ms\) # guard allocator debug mode does not support graph capture/);
    const all = summaries(r.output);
    assert.equal(all.length, 2, r.output);
    assert.deepEqual(all.map((s) => s.violations).sort(), [0, 2]);
    assert.match(
      r.output,
      /\[mate-guard\] note: this summary covers this test file only: .*--require @mate-guard\/node-test/,
    );
  });

  test('a test file run directly (tests in this process): guarded, bracketed, one summary', async () => {
    const r = await node(['--import', '@mate-guard/node-test', 'canary/canary.test.cjs'], { env: ON });
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /==mate-guard== test: canary\/canary\.test\.cjs > canary damage > underflows by one\n/);
    assert.equal(summary(r.output).violations, 2);
  });

  test('MATE_NODE_TEST_GUARD_MODE=head turns the underflow into a fault; MATE_NODE_TEST_GUARD_LOG_ALLOCATIONS names the test', async () => {
    const head = await node([...REQUIRE, 'fault/underflow.test.cjs'], {
      env: { ...ON, MATE_NODE_TEST_GUARD_MODE: 'head' },
    });
    assert.equal(head.code, 1, head.output);
    assert.match(
      head.output,
      /==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
    );
    assert.match(head.output, /✖ fills one byte before the start\n/);
    const log = await node([...REQUIRE, 'clean/clean.test.mjs'], {
      env: { ...ON, MATE_NODE_TEST_GUARD_LOG_ALLOCATIONS: 'yes' },
    });
    assert.equal(log.code, 0, log.output);
    assert.match(
      log.output,
      /\[mate-guard\] alloc #\d+ ptr=0x[0-9a-f]+ requested=4096 mapped=\d+ mode=tail backend=host test="clean\/clean\.test\.mjs > clean addon use > writes and reads inside the bounds"/,
    );
  });

  test('a bad MATE_NODE_TEST_GUARD_* value stops the run before any test, in one line', async () => {
    const r = await node([...REQUIRE, ...CLEAN], { env: { MATE_NODE_TEST_GUARD_ALLOC: 'maybe' } });
    assert.equal(r.code, 2, r.output); // the usage-error status of every entry point (test/bad-settings)
    assert.equal(
      r.stderr,
      'mate-guard: MATE_NODE_TEST_GUARD_ALLOC: "maybe" is not a boolean; use 1/true/yes/on or 0/false/no/off\n',
    );
    assert.doesNotMatch(r.output, /✔|RAN:/);
    const typo = await node([...REQUIRE, ...CLEAN], { env: { MATE_NODE_TEST_GUARD_MOD: 'head' } });
    assert.equal(typo.code, 2, typo.output);
    assert.equal(
      typo.stderr,
      'mate-guard: unknown environment variable "MATE_NODE_TEST_GUARD_MOD"; did you mean MATE_NODE_TEST_GUARD_MODE?\n',
    );
  });

  test('--watch: a summary at the end of every round', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-node-test-watch-'));
    const file = path.join(dir, 'watched.test.cjs');
    fs.writeFileSync(file, "require('node:test')('allocates', () => { Buffer.alloc(64); });\n");
    const w = startWatch(process.execPath, ['--test', '--watch', '--require', '@mate-guard/node-test', file], {
      cwd: ROOT,
      env: ON,
    });
    try {
      await w.waitFor(/\[mate-guard\] summary: [1-9]\d* allocations? guarded/);
      fs.appendFileSync(file, '// changed\n');
      const out = await w.waitFor(/\[mate-guard\] summary: /, 2);
      assert.equal(summaries(out).length, 2);
    } finally {
      await w.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mate-node-test (drop-in CLI that watches node --test)', () => {
  test('--guard-mode head with a space; the fault is named, the summary counts the dead process', async () => {
    const r = await mateNodeTest([
      '--guard-alloc',
      '--guard-mode',
      'head',
      'fault/underflow.test.cjs',
      'clean/clean.test.mjs',
    ]);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      /\[mate-guard\] node:test process \d+ was killed by a guard fault: heap-buffer-underflow on allocation #\d+ \(64 bytes, head mode\) while running fault\/underflow\.test\.cjs > fills one byte before the start/,
    );
    assert.match(r.output, /✔ clean addon use/);
    const s = summary(r.output);
    assert.equal(s.died, 1);
    assert.ok(s.allocations > 0);
  });

  test('canary damage: rerun in the faulting configuration, the faults shown', async () => {
    const r = await mateNodeTest(['--guard-alloc', 'canary/canary.test.cjs']);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      /\[mate-guard\] rerun in head mode: the canary-corruption of allocation #\d+ \(64 bytes, tail mode\) in canary\/canary\.test\.cjs > canary damage > underflows by one faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE/,
    );
    assert.match(rerunReportOf(r.output, 'head mode'), accessSite('underflow'));
    assert.match(rerunReportOf(r.output, 'tail mode with alignment 1'), accessSite('gap'));
    assert.equal(summary(r.output).violations, 2);
  });

  test('clean: exit 0 with one summary; unguarded without the flag', async () => {
    assertGuardedClean(await mateNodeTest(['--guard-alloc', ...CLEAN]));
    const off = await mateNodeTest(CLEAN);
    assert.equal(off.code, 0, off.output);
    assert.match(off.output, /RAN: needs unguarded memory/);
    assert.doesNotMatch(off.output, /\[mate-guard\]/);
  });

  // A run that starts no test file exits as node --test does: test/no-tests.test.mjs.

  test('a bad value stops before node starts (exit 2); --help lists the guard flags with MATE_NODE_TEST_GUARD_*', async () => {
    const bad = await mateNodeTest(['--guard-mode', 'sideways', ...CLEAN]);
    assert.equal(bad.code, 2, bad.output);
    assert.equal(bad.stderr, 'mate-node-test: --guard-mode: "sideways" is not a guard mode; use tail or head\n');
    const typo = await mateNodeTest(['--guard-mod', 'head', ...CLEAN]);
    assert.equal(typo.code, 2, typo.output);
    assert.equal(typo.stderr, 'mate-node-test: unknown option "--guard-mod"; did you mean --guard-mode?\n');
    const help = await run(process.execPath, [MATE_NODE_TEST, '--help'], { cwd: FIXTURES });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--guard-mode <tail\|head>.*MATE_NODE_TEST_GUARD_MODE/);
    assert.match(help.stdout, /--guard-alloc, --no-guard-alloc.*MATE_NODE_TEST_GUARD_ALLOC/);
  });

  test('--guard-report-dir keeps the run for `mate report`, which merges it with others', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-node-test-reports-'));
    try {
      const a = await mateNodeTest([
        '--guard-alloc',
        '--guard-report-dir',
        dir,
        '--no-guard-rerun',
        'canary/canary.test.cjs',
      ]);
      assert.equal(a.code, 1, a.output);
      const b = await mateNodeTest(['--guard-alloc', '--guard-report-dir', dir, 'fault/overflow.test.mjs']);
      assert.equal(b.code, 1, b.output);
      const merged = await run(process.execPath, [MATE, 'report', dir]);
      assert.equal(merged.code, 1, merged.output);
      assert.match(merged.output, /\[mate-guard\] merged 2 report directories \(2 node-test\)/);
      const s = summary(merged.output);
      assert.equal(s.violations, 3);
      assert.equal(s.died, 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('node flags (--expose-gc) reach the test processes', () => {
  const GC_TEST = 'gc/gc.test.cjs > collects garbage with global.gc'; // calls global.gc

  test('node --expose-gc mate-node-test: node --test and its test processes run with the flag', async () => {
    const r = await run(
      process.execPath,
      [
        '--expose-gc',
        MATE_NODE_TEST,
        '--test-reporter=spec',
        '--guard-alloc',
        '--guard-mode=head',
        '--guard-log-allocations',
        'gc/gc.test.cjs',
      ],
      { cwd: FIXTURES },
    );
    assertGcSuiteGuarded(r, GC_TEST);
  });

  test("the inspector's flags stay with mate-node-test (its port is taken): no second inspector fails to start", async () => {
    const port = await new Promise((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address();
        server.close(() => resolve(free));
      });
    });
    const r = await run(
      process.execPath,
      [
        `--inspect=127.0.0.1:${port}`,
        '--expose-gc',
        MATE_NODE_TEST,
        '--test-reporter=spec',
        '--guard-alloc',
        '--guard-mode=head',
        '--guard-log-allocations',
        'gc/gc.test.cjs',
      ],
      { cwd: FIXTURES },
    );
    assert.match(
      r.output,
      new RegExp(`Debugger listening on ws://127\\.0\\.0\\.1:${port}/`),
      'mate-node-test itself has the inspector',
    );
    assert.doesNotMatch(r.output, /address already in use|Starting inspector .* failed/);
    assertGcSuiteGuarded(r, GC_TEST);
  });

  test('plain node --expose-gc --test --require @mate-guard/node-test', async () => {
    const env = { ...ON, MATE_NODE_TEST_GUARD_MODE: 'head', MATE_NODE_TEST_GUARD_LOG_ALLOCATIONS: '1' };
    assertGcSuiteGuarded(await node(['--expose-gc', ...REQUIRE, 'gc/gc.test.cjs'], { env }), GC_TEST);
  });
});

describe('a canary rerun that runs no test', () => {
  test('says it ran no test instead of "did not fault" (a test named with a seed cannot be selected again)', async () => {
    const r = await mateNodeTest(['--guard-alloc', 'renamed/seeded.test.cjs']);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      /\[mate-guard\] rerun in tail mode with alignment 1: ran no test, so it tells nothing about the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in renamed\/seeded\.test\.cjs > writes into the alignment gap \(seed \d+\): the runner selected none of its tests/,
    );
    assert.doesNotMatch(r.output, /did not fault/);
  });
});

describe('TAP after a crash', () => {
  /** Every (sub)test stream of a TAP document as tap-parser reads it: name, plan, count, parse errors ("no plan"). */
  function parseTap(text) {
    const streams = [];
    const watch = (parser, name) => {
      parser.on('child', (child) => watch(child, child.name));
      parser.on('complete', (r) =>
        streams.push({
          name,
          plan: r.plan.end ?? null,
          count: r.count,
          errors: r.failures.filter((f) => f.tapError).map((f) => f.tapError),
        }),
      );
    };
    const parser = new Parser();
    watch(parser, '(root)');
    parser.end(text);
    return streams;
  }

  test("a crash three suites deep: tap-parser finds a plan that counts its tests in every enclosing suite, as in node's own TAP", async () => {
    const tap = ['--test', '--require', '@mate-guard/node-test', '--test-reporter=tap', 'nested/'];
    const r = await node(tap, { env: ON });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      /==mate-guard== test: nested\/nested-crash\.test\.mjs > outer > middle > inner > fills one byte too far/,
    );
    const streams = parseTap(r.stdout);
    for (const suite of ['outer', 'middle', 'inner'])
      assert.ok(
        streams.some((s) => s.name === suite),
        `${suite} in the TAP:\n${r.stdout}`,
      );
    for (const s of streams) {
      assert.deepEqual(s.errors, [], `${s.name}: no TAP error:\n${r.stdout}`);
      assert.equal(s.plan, s.count, `${s.name}: its plan counts its tests:\n${r.stdout}`);
    }
    // Node's own TAP for the same nesting (unguarded, the bug is silent) has a plan at every level too.
    const plain = parseTap((await node(tap)).stdout);
    for (const suite of ['outer', 'middle', 'inner']) assert.ok(plain.find((s) => s.name === suite)?.plan > 0, suite);
  });

  /** The test points and plans of each block of a TAP stream (a block: the lines at one indentation between plans). */
  function tapBlocks(output) {
    const blocks = new Map(); // indent -> { numbers, plans }
    const closed = [];
    for (const line of output.split('\n')) {
      const m = /^( *)(?:(not ok|ok) (\d+) - (.*)|1\.\.(\d+))$/.exec(line);
      if (!m) continue;
      const indent = m[1].length;
      const block = blocks.get(indent) ?? { indent, numbers: [], names: [] };
      blocks.set(indent, block);
      if (m[5] !== undefined) {
        closed.push({ ...block, plan: Number(m[5]) });
        blocks.delete(indent);
      } else {
        block.numbers.push(Number(m[3]));
        block.names.push(`${m[2]} ${m[4]}`);
      }
    }
    return { closed, unclosed: [...blocks.values()] };
  }

  test('valid TAP: each crashed test once, numbered in order, plans that count them; no second entry for the dead file', async () => {
    const r = await node(
      [...REQUIRE.filter((a) => a !== '--test-reporter=spec'), '--test-reporter=tap', 'fault/', 'clean/clean.test.mjs'],
      { env: ON },
    );
    assert.equal(r.code, 1, r.output);
    const { closed, unclosed } = tapBlocks(r.stdout);
    assert.deepEqual(unclosed, [], `every block has its plan:\n${r.stdout}`);
    for (const b of closed) {
      assert.deepEqual(
        b.numbers,
        b.numbers.map((_, i) => i + 1),
        `numbers in order from 1 at indent ${b.indent}: ${b.names.join(', ')}`,
      );
      assert.equal(b.plan, b.numbers.length, `the plan counts the block's tests: ${b.names.join(', ')}`);
    }
    const failures = r.stdout.split('\n').filter((l) => /^ *not ok \d+ - /.test(l));
    assert.equal(failures.filter((l) => / - fills one byte too far$/.test(l)).length, 1, r.stdout);
    assert.equal(failures.filter((l) => / - fills one byte before the start$/.test(l)).length, 1, r.stdout);
    assert.equal(
      failures.filter((l) => /\.test\.(mjs|cjs)$/.test(l)).length,
      0,
      `no entry for a dead file besides its crashed test:\n${r.stdout}`,
    );
  });
});

describe('tests skipped by tag, then a guard fault in the same process', () => {
  test('the summary still counts the skips (plain node --test and mate-node-test)', async () => {
    // Before: "0 tests skipped by tag": the skips were counted only in the dying process.
    for (const r of [
      await node([...REQUIRE, 'tags-then-fault/tags-then-fault.test.mjs'], { env: ON }),
      await mateNodeTest(['--guard-alloc', 'tags-then-fault/tags-then-fault.test.mjs']),
    ]) {
      assert.notEqual(r.code, 0, r.output);
      assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
      assert.match(r.output, /\[mate-guard\] summary: .*, 1 process died, 2 tests skipped by tag$/m);
    }
  });
});
