// @mate-guard/mocha against the real mocha (serial and --parallel) and the
// real examples addon: what a user sees (exit code, report, test status,
// skip reason, summary line).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { assertGcSuiteGuarded } from './helpers/gc-suite.mjs';
import { accessSite } from './helpers/native-frames.mjs';
import { BIN, firstAllocationFrame, rerunReportOf, ROOT, run } from './helpers/run.mjs';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'mocha');
const MOCHA = path.join(BIN, 'mocha');
const MATE_MOCHA = path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js');
const PLUGIN = ['--require', '@mate-guard/mocha'];
const CLEAN = ['clean/clean.spec.cjs', 'clean/tagged.spec.cjs'];

// Mocha 10 (the test/fixtures/mocha-10 workspace's): its re-spawn writes `--flag=value` options as two words.
const MOCHA_10 = path.join(ROOT, 'test', 'fixtures', 'mocha-10', 'node_modules', 'mocha', 'bin', 'mocha.js');
const mocha = (args, opts = {}) => run(MOCHA, args, { cwd: FIXTURES, ...opts });
const mocha10 = (args, opts = {}) => run(process.execPath, [MOCHA_10, ...args], { cwd: FIXTURES, ...opts });
const mateMocha = (args, opts = {}) => run(process.execPath, [MATE_MOCHA, ...args], { cwd: FIXTURES, ...opts });

const SKIP_INCOMPATIBLE =
  '- needs unguarded memory (skipped by mate-guard: guard allocator debug mode does not support this test (tagged guard_incompatible))';
const SKIP_GRAPH =
  '- captures a graph (skipped by mate-guard: guard allocator debug mode does not support graph capture)';

function summary(output) {
  const lines = output.split('\n').filter((l) => l.startsWith('[mate-guard] summary:'));
  assert.equal(lines.length, 1, `expected one summary line in:\n${output}`);
  const m =
    /^\[mate-guard\] summary: (\d+) allocations? guarded, peak live (\d+), (\d+) unguarded fallbacks?, (\d+) violations?, (?:\d+ process(?:es)? died, )?(\d+) tests? skipped by tag$/.exec(
      lines[0],
    );
  assert.ok(m, `unexpected summary line: ${lines[0]}`);
  return { allocations: +m[1], peakLive: +m[2], fallbacks: +m[3], violations: +m[4], skippedByTag: +m[5] };
}

function assertFailed(r) {
  assert.ok(r.code !== 0 || r.signal !== null, `expected a non-zero exit, got ${r.code}:\n${r.output}`);
}

function assertGuardedClean(r) {
  assert.equal(r.code, 0, r.output);
  assert.doesNotMatch(r.output, /==mate-guard==/);
  assert.ok(r.output.includes(SKIP_INCOMPATIBLE), r.output);
  assert.ok(r.output.includes(SKIP_GRAPH), r.output);
  assert.doesNotMatch(r.output, /RAN:/); // neither the tagged tests nor the tagged suite's before hook
  assert.match(r.output, /5 passing/);
  assert.match(r.output, /2 pending/);
  const s = summary(r.output);
  assert.ok(s.allocations > 0, 'buffers were guarded');
  assert.equal(s.violations, 0);
  assert.equal(s.skippedByTag, 2);
}

function assertUnguardedClean(r) {
  assert.equal(r.code, 0, r.output);
  for (const ran of ['RAN: needs unguarded memory', 'RAN: graph capture before hook', 'RAN: captures a graph']) {
    assert.ok(r.output.includes(ran), `${ran} missing:\n${r.output}`);
  }
  assert.match(r.output, /7 passing/);
  assert.doesNotMatch(r.output, /pending|skipped by mate-guard|\[mate-guard\]|==mate-guard==/);
}

/** The failure block mocha prints for a test, from its title to the next one. */
function failureOf(output, title) {
  const start = output.indexOf(`${title}:\n`);
  assert.ok(start >= 0, `no failure for "${title}" in:\n${output}`);
  const next = output.slice(start + 1).search(/\n {2}\d+\) /);
  return next < 0 ? output.slice(start) : output.slice(start, start + 1 + next);
}

function assertCanaryFailures(r) {
  assertFailed(r);
  assert.match(r.output, /✔ passes before the bugs/);
  assert.match(r.output, /✔ passes after the bugs/);
  assert.match(r.output, /2 passing/);
  assert.match(r.output, /2 failing/);
  const under = failureOf(r.output, 'underflows by one');
  assert.match(
    under,
    /==mate-guard== ERROR: canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\) damaged/,
  );
  assert.match(under, /==mate-guard== test: canary\/canary\.spec\.cjs > canary damage > underflows by one\n/);
  assert.match(under, /rerun with --guard-mode head/);
  const gap = failureOf(r.output, 'overflows into the alignment gap');
  assert.match(
    gap,
    /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged/,
  );
  assert.match(
    gap,
    /==mate-guard== test: canary\/canary\.spec\.cjs > canary damage > overflows into the alignment gap\n/,
  );
  assert.equal(summary(r.output).violations, 2);
}

const OVERFLOW_TEST = 'fault/overflow.spec.cjs > overflow > fills one byte too far';

function assertOverflowReport(r) {
  assertFailed(r);
  assert.match(
    r.output,
    /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
  );
  assert.ok(r.output.includes(`==mate-guard== test: ${OVERFLOW_TEST}\n`), r.output);
  assert.doesNotMatch(r.output, /is never reached under guard/);
}

describe('mocha serial (plain mocha --require @mate-guard/mocha)', () => {
  test('clean suite: passes guarded with no report; tagged tests pending with the reason; summary line', async () => {
    assertGuardedClean(await mocha([...PLUGIN, '--guard-alloc', ...CLEAN]));
  });

  test('guarding off by default: tagged tests run, no summary', async () => {
    assertUnguardedClean(await mocha([...PLUGIN, ...CLEAN]));
  });

  test('canary damage fails exactly the test that did it', async () => {
    assertCanaryFailures(await mocha([...PLUGIN, '--guard-alloc', 'canary/canary.spec.cjs']));
  });

  test('canary damage in a throwing test, a done-callback test and a before() hook', async () => {
    const r = await mocha([...PLUGIN, '--guard-alloc', 'canary/more.spec.cjs']);
    assertFailed(r);
    assert.match(r.output, /3 failing/);
    const thrown = failureOf(r.output, 'damages, then throws');
    assert.match(thrown, /canary-corruption: 1 byte past the end of allocation #\d+ \(13 bytes, tail mode\)/);
    assert.match(thrown, /\(the test also failed: Error: boom after the damage\)/);
    const cb = failureOf(r.output, 'damages in a done-callback test');
    assert.match(cb, /canary-corruption: 3 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/);
    assert.match(cb, /test: canary\/more\.spec\.cjs > damage and a thrown error > damages in a done-callback test/);
    // Damage done in a before() hook is nobody's test: it fails the root "after all" hook, after every test ran.
    assert.match(r.output, /✔ first test after the hook/);
    const hook = failureOf(r.output, '"after all" hook: mate-guard damage outside tests in "{root}"');
    assert.match(hook, /outside any test \(module code or beforeAll\/afterAll hooks of this run\)/);
    assert.match(hook, /canary-corruption: 2 bytes past the end of allocation #\d+ \(29 bytes, tail mode\)/);
    assert.equal(summary(r.output).violations, 3);
  });

  test('overflow fault: mocha dies, the dying process prints the report with the test name', async () => {
    const r = await mocha([...PLUGIN, '--guard-alloc', 'fault/overflow.spec.cjs']);
    assertOverflowReport(r);
    assert.equal(r.signal ?? (r.code === 139 ? 'SIGSEGV' : r.code), 'SIGSEGV');
    assert.match(r.output, /✔ runs first and passes/);
    assert.match(r.output, accessSite('overflow'), 'the access block names the addon function and line');
    assert.match(
      firstAllocationFrame(r.output),
      /^==mate-guard==   at Context\.<anonymous> \(.*fault\/overflow\.spec\.cjs:\d+:\d+\)$/,
      "the allocation stack starts at the spec's line",
    );
  });

  test('use-after-free through a retained pointer (--expose-gc: mocha re-spawns itself)', async () => {
    const r = await mocha([...PLUGIN, '--guard-alloc', '--expose-gc', 'fault/use-after-free.spec.cjs']);
    assertFailed(r);
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(256 bytes, tail mode\)/,
    );
    assert.match(
      r.output,
      /==mate-guard== test: fault\/use-after-free\.spec\.cjs > stale pointer > writes to a freed buffer\n/,
    );
    assert.match(r.output, /freed by the garbage collector/);
    assert.match(r.output, accessSite('use-after-free'));
  });

  test('--guard-mode=head turns the underflow into a fault', async () => {
    const r = await mocha([...PLUGIN, '--guard-alloc', '--guard-mode=head', 'fault/underflow.spec.cjs']);
    assertFailed(r);
    assert.match(
      r.output,
      /==mate-guard== ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
    );
    assert.match(
      r.output,
      /==mate-guard== test: fault\/underflow\.spec\.cjs > underflow > fills one byte before the start\n/,
    );
  });

  test('--guard-log-allocations prints a line per allocation with the test name', async () => {
    const r = await mocha([...PLUGIN, '--guard-alloc', '--guard-log-allocations', 'clean/clean.spec.cjs']);
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.output,
      /\[mate-guard\] alloc #\d+ ptr=0x[0-9a-f]+ requested=4096 mapped=\d+ mode=tail backend=host test="clean\/clean\.spec\.cjs > clean addon use > writes and reads inside the bounds"/,
    );
  });
});

describe('mocha --parallel (plain mocha)', () => {
  test('clean suite passes in the workers; tags skipped; summary from the workers', async () => {
    assertGuardedClean(await mocha([...PLUGIN, '--guard-alloc', '--parallel', ...CLEAN]));
  });

  test('canary damage fails the test that did it, inside a worker', async () => {
    assertCanaryFailures(await mocha([...PLUGIN, '--guard-alloc', '--parallel', 'canary/canary.spec.cjs']));
  });

  test('a worker killed by a fault: report, the test name, non-zero exit (mocha alone says nothing)', async () => {
    const r = await mocha([
      ...PLUGIN,
      '--guard-alloc',
      '--parallel',
      'fault/overflow.spec.cjs',
      'clean/clean.spec.cjs',
    ]);
    assertOverflowReport(r);
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] mocha worker \\d+ was killed by a guard fault: heap-buffer-overflow on allocation #\\d+ \\(64 bytes, tail mode\\) while running ${OVERFLOW_TEST}`,
      ),
    );
    // The crashed test is back in mocha's own results (and every reporter's), with its report.
    assert.match(r.output, /1 failing/);
    assert.match(
      r.output,
      /1\) overflow\n\s+fills one byte too far:\n\s+==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.equal(summary(r.output).violations, 1);
  });

  test('a report mocha got with an earlier file of the worker is not called unshown when a fault kills that worker', async () => {
    // Before: "mocha worker N gave its test runner a report before the guard fault killed it; the runner
    // never showed it", then a-canary's report a second time, though mocha had listed it under its failure.
    const files = ['a-canary', 'b-slow', 'c-fault'].map((f) => `shown-then-fault/${f}.spec.cjs`);
    for (const r of [
      await mocha([...PLUGIN, '--guard-alloc', '--parallel', '--jobs', '2', ...files]),
      await mateMocha(['--guard-alloc', '--no-guard-rerun', '--parallel', '--jobs', '2', ...files]),
    ]) {
      const pids = [...r.output.matchAll(/(?:a-canary|c-fault) ran in (\d+)/g)].map((m) => m[1]);
      assert.deepEqual(new Set(pids).size, 1, `a-canary and c-fault share a worker:\n${r.output}`);
      assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
      assert.match(r.output, /\d+\) writes into the alignment gap:\n\s+mate-guard found a memory violation/);
      assert.doesNotMatch(r.output, /the runner never showed it/);
      const canary = r.output.split('\n').filter((l) => /==mate-guard== ERROR: canary-corruption/.test(l));
      assert.equal(canary.length, 1, r.output);
    }
  });
});

describe('mate-mocha (drop-in CLI that watches mocha)', () => {
  test('--guard-mode head with a space; a serial fault is named after mocha dies', async () => {
    const r = await mateMocha(['--guard-alloc', '--guard-mode', 'head', 'fault/underflow.spec.cjs']);
    assert.equal(r.code, 139, r.output);
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-underflow on WRITE/);
    assert.match(
      r.output,
      /\[mate-guard\] mocha process \d+ was killed by a guard fault: heap-buffer-underflow on allocation #\d+ \(64 bytes, head mode\) while running fault\/underflow\.spec\.cjs > underflow > fills one byte before the start/,
    );
    assert.equal(summary(r.output).violations, 1);
  });

  test('--watch=false is not watch mode: the serial fault is still named after mocha dies', async () => {
    const r = await mateMocha(['--guard-alloc', '--watch=false', 'fault/overflow.spec.cjs']);
    assertOverflowReport(r);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] mocha process \\d+ was killed by a guard fault: heap-buffer-overflow .* while running ${OVERFLOW_TEST}`,
      ),
    );
  });

  test('--parallel: a worker fault is named, exit non-zero', async () => {
    const r = await mateMocha(['--guard-alloc', '--parallel', 'fault/overflow.spec.cjs']);
    assertOverflowReport(r);
    assert.match(
      r.output,
      new RegExp(
        `\\[mate-guard\\] mocha worker \\d+ was killed by a guard fault: heap-buffer-overflow .* while running ${OVERFLOW_TEST}`,
      ),
    );
  });

  test('canary damage: each test rerun in its faulting configuration, the faults shown; --no-guard-rerun: none', async () => {
    const r = await mateMocha(['--guard-alloc', 'canary/canary.spec.cjs']);
    assertFailed(r);
    assert.match(
      r.output,
      /\[mate-guard\] rerun in head mode: the canary-corruption of allocation #\d+ \(64 bytes, tail mode\) in canary\/canary\.spec\.cjs > canary damage > underflows by one faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow on WRITE/,
    );
    assert.match(
      r.output,
      /\[mate-guard\] rerun in tail mode with alignment 1: the canary-corruption of allocation #\d+ \(13 bytes, tail mode\) in canary\/canary\.spec\.cjs > canary damage > overflows into the alignment gap faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
    );
    assert.match(rerunReportOf(r.output, 'head mode'), accessSite('underflow'));
    assert.match(rerunReportOf(r.output, 'tail mode with alignment 1'), accessSite('gap'));
    assert.equal(summary(r.output).violations, 2);
    const off = await mateMocha(['--guard-alloc', '--no-guard-rerun', 'canary/canary.spec.cjs']);
    assertFailed(off);
    assert.doesNotMatch(off.output, /\[mate-guard\] rerun/);
  });

  test('clean suite: one summary line, exit 0; unguarded without the flag', async () => {
    assertGuardedClean(await mateMocha(['--guard-alloc', '--guard-mode', 'tail', ...CLEAN]));
    assertUnguardedClean(await mateMocha(CLEAN));
  });

  test('a bad value stops before mocha starts, naming the flag and the value', async () => {
    const r = await mateMocha(['--guard-mode', 'sideways', ...CLEAN]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /mate-mocha: --guard-mode: "sideways" is not a guard mode; use tail or head/);
    assert.doesNotMatch(r.output, /passing/);
  });

  test("--help lists the guard flags and their variables, then mocha's help", async () => {
    const r = await mateMocha(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--guard-mode <tail\|head>.*MATE_MOCHA_GUARD_MODE/);
    assert.match(r.stdout, /--guard-alloc, --no-guard-alloc.*MATE_MOCHA_GUARD_ALLOC/);
    assert.match(r.stdout, /Usage: mocha/);
  });
});

describe('node flags: mocha re-spawns itself with them; mate-mocha passes them on', () => {
  const GC = 'gc/gc.spec.cjs'; // calls global.gc: passes only with --expose-gc
  const GC_TEST = 'gc/gc.spec.cjs > gc > collects garbage with global.gc';
  const SHOWN = ['--guard-mode=head', '--guard-log-allocations'];

  test('plain mocha 12 and mocha 10 --expose-gc: the guard flags as the user wrote them reach the re-spawned mocha', async () => {
    assertGcSuiteGuarded(await mocha([...PLUGIN, '--expose-gc', '--guard-alloc', ...SHOWN, GC]), GC_TEST);
    // Mocha 10 writes --guard-mode=head for its child as `--guard-mode head`, which a user may not write to plain mocha.
    // (Its parser gives an unknown flag the next word: the spec file goes first.)
    assertGcSuiteGuarded(await mocha10([GC, ...PLUGIN, '--expose-gc', '--guard-alloc', ...SHOWN]), GC_TEST);
  });

  test('node --expose-gc mate-mocha: mocha and the tests run with the flag', async () => {
    assertGcSuiteGuarded(
      await run(
        process.execPath,
        ['--expose-gc', MATE_MOCHA, '--guard-alloc', '--guard-mode', 'head', '--guard-log-allocations', GC],
        { cwd: FIXTURES },
      ),
      GC_TEST,
    );
  });

  test("rc keys stay rc keys in the re-spawned mocha: MATE_MOCHA_GUARD_MODE=tail beats the rc's head (mocha 12 and 10)", async () => {
    const cwd = path.join(FIXTURES, 'rc'); // .mocharc.json: require the plugin, guard-alloc true, guard-mode head
    for (const runner of [mocha, mocha10]) {
      const r = await runner(['--expose-gc', '../fault/underflow.spec.cjs'], {
        cwd,
        env: { MATE_MOCHA_GUARD_MODE: 'tail' },
      });
      assertFailed(r);
      assert.match(r.output, /canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\)/);
      assert.doesNotMatch(r.output, /heap-buffer-underflow on WRITE/);
    }
  });

  test("mocha's child command line with no mocha parent to read it from: its two-word values are taken", async () => {
    // What Mocha 10 runs for `mocha --expose-gc --guard-mode=head ...`, started here directly.
    const cli = path.join(ROOT, 'test', 'fixtures', 'mocha-10', 'node_modules', 'mocha', 'lib', 'cli', 'cli.js');
    const r = await run(
      process.execPath,
      [
        '--expose-gc',
        cli,
        GC,
        '--require',
        '@mate-guard/mocha',
        '--guard-alloc',
        '--guard-mode',
        'head',
        '--guard-log-allocations',
        '--no-config',
      ],
      { cwd: FIXTURES },
    );
    assertGcSuiteGuarded(r, GC_TEST);
  });
});

describe('precedence: flag > MATE_MOCHA_GUARD_* > .mocharc key > off', () => {
  const RC = path.join(FIXTURES, 'rc'); // .mocharc.json: require the plugin, guard-alloc true, guard-mode head
  const underflow = '../fault/underflow.spec.cjs';
  const clean = CLEAN.map((f) => `../${f}`);
  const headFault = /==mate-guard== ERROR: heap-buffer-underflow on WRITE/;

  test('rc keys alone: guarded in head mode', async () => {
    const r = await mocha([underflow], { cwd: RC });
    assertFailed(r);
    assert.match(r.output, headFault);
  });

  test('env beats rc (mode tail: canary damage instead of a fault); flag beats env', async () => {
    const env = { MATE_MOCHA_GUARD_MODE: 'tail' };
    const tail = await mocha([underflow], { cwd: RC, env });
    assertFailed(tail);
    assert.match(tail.output, /canary-corruption: 1 byte before the start of allocation #\d+ \(64 bytes, tail mode\)/);
    assert.doesNotMatch(tail.output, headFault);
    const head = await mocha(['--guard-mode=head', underflow], { cwd: RC, env });
    assert.match(head.output, headFault);
  });

  test('MATE_MOCHA_GUARD_ALLOC=0 beats rc; --guard-alloc beats the env', async () => {
    const env = { MATE_MOCHA_GUARD_ALLOC: '0' };
    assertUnguardedClean(await mocha(clean, { cwd: RC, env }));
    assertGuardedClean(await mocha(['--guard-alloc', ...clean], { cwd: RC, env }));
  });

  test('MATE_MOCHA_GUARD_ALLOC=yes turns guarding on; --no-guard-alloc turns it off', async () => {
    const env = { MATE_MOCHA_GUARD_ALLOC: 'yes' };
    assertGuardedClean(await mocha([...PLUGIN, ...CLEAN], { env }));
    assertUnguardedClean(await mocha([...PLUGIN, '--no-guard-alloc', ...CLEAN], { env }));
  });

  test('MATE_MOCHA_GUARD_LOG_ALLOCATIONS=1, overridden by --no-guard-log-allocations', async () => {
    const env = { MATE_MOCHA_GUARD_LOG_ALLOCATIONS: '1' };
    const on = await mocha([...PLUGIN, '--guard-alloc', 'clean/clean.spec.cjs'], { env });
    assert.match(on.output, /\[mate-guard\] alloc #\d+ /);
    const off = await mocha([...PLUGIN, '--guard-alloc', '--no-guard-log-allocations', 'clean/clean.spec.cjs'], {
      env,
    });
    assert.equal(off.code, 0, off.output);
    assert.doesNotMatch(off.output, /\[mate-guard\] alloc/);
  });
});

describe('bad values stop the run before any test, naming the source and the value', () => {
  const cases = [
    [
      'MATE_MOCHA_GUARD_ALLOC=maybe',
      [...PLUGIN, ...CLEAN],
      { MATE_MOCHA_GUARD_ALLOC: 'maybe' },
      FIXTURES,
      'MATE_MOCHA_GUARD_ALLOC: "maybe" is not a boolean; use 1/true/yes/on or 0/false/no/off',
    ],
    [
      'MATE_MOCHA_GUARD_MODE=x (parallel)',
      [...PLUGIN, '--parallel', ...CLEAN],
      { MATE_MOCHA_GUARD_MODE: 'x' },
      FIXTURES,
      'MATE_MOCHA_GUARD_MODE: "x" is not a guard mode; use tail or head',
    ],
    [
      'MATE_MOCHA_GUARD_LOG_ALLOCATIONS=2',
      [...PLUGIN, ...CLEAN],
      { MATE_MOCHA_GUARD_LOG_ALLOCATIONS: '2' },
      FIXTURES,
      'MATE_MOCHA_GUARD_LOG_ALLOCATIONS: "2" is not a boolean',
    ],
    [
      '--guard-mode=sideways',
      [...PLUGIN, '--guard-mode=sideways', ...CLEAN],
      {},
      FIXTURES,
      '--guard-mode: "sideways" is not a guard mode; use tail or head',
    ],
    [
      '--guard-alloc=perhaps',
      [...PLUGIN, '--guard-alloc=perhaps', ...CLEAN],
      {},
      FIXTURES,
      '--guard-alloc: "perhaps" is not a boolean',
    ],
    [
      '--guard-mode tail (space: plain mocha took tail for a spec)',
      [...PLUGIN, '--guard-alloc', '--guard-mode', 'tail', ...CLEAN],
      {},
      FIXTURES,
      '--guard-mode tail: plain mocha takes "tail" for a spec file; write --guard-mode=tail (or use mate-mocha)',
    ],
    [
      'rc guard-mode: diagonal',
      [],
      {},
      path.join(FIXTURES, 'rc-bad'),
      'guard-mode: "diagonal" is not a guard mode; use tail or head',
    ],
  ];
  for (const [name, args, env, cwd, message] of cases) {
    test(name, async () => {
      const r = await mocha(args, { env, cwd });
      assert.equal(r.code, 2, r.output);
      assert.ok(
        r.stderr.includes(`mate-guard: `) && r.stderr.includes(message),
        `expected "${message}" in:\n${r.output}`,
      );
      assert.doesNotMatch(r.output, /passing|failing|RAN:/);
    });
  }
});
