// `mate replay <report-dir>`: a recorded run (a real runner on the
// examples' planted bugs, with a report directory) is replayed from its
// directory alone: only the tests its violations name rerun, under the
// same runner and entry point, with the recorded settings, in the mode and
// alignment given; the report comes back and the exit code is the runner's.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { MATE, ROOT, reportOf, run } from './helpers/run.mjs';
import { buildFakeDriver, buildMatrix, noGxx } from './helpers/sim.mjs';

const PKG = path.join(ROOT, 'packages');
const MATE_NODE_TEST = path.join(PKG, 'node-test', 'bin', 'mate-node-test.js');
const MATE_MOCHA = path.join(PKG, 'mocha-plugin', 'bin', 'mate-mocha.js');
const MATE_JEST = path.join(PKG, 'jest-env', 'bin', 'mate-jest.js');
const MATE_VITEST = path.join(PKG, 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const EX = path.join(ROOT, 'examples');

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const GAP_TEST = 'examples/node-test/gap-overflow.test.mjs > alignment-gap overflow > writes at index length + 1';

/** Runs `args` (a recorded run with a fresh --guard-report-dir) and returns its run's directory. */
async function recorded(cmd, args, opts = {}) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-'));
  const r = await run(cmd, args(parent), opts);
  const dirs = fs.readdirSync(parent);
  assert.equal(dirs.length, 1, r.output);
  return { ...r, parent, dir: path.join(parent, dirs[0]) };
}

/** Report lines as a runner that indents them (node --test's TAP comments, with `#` escaped) prints them, unindented. */
const unindent = (output) =>
  output
    .split('\n')
    .map((l) => {
      const m = /^[ #]*(==mate-guard==.*)$/.exec(l);
      return m ? m[1].replace(/\\#/g, '#') : l;
    })
    .join('\n');

// From the checkout, as a user replays a CI artifact (the report directories are elsewhere, in the temporary directory).
const replay = (args, opts = {}) => run(process.execPath, [MATE, 'replay', ...args], { cwd: ROOT, ...opts });

describe('mate replay', () => {
  test("node:test: the recorded run's failing test alone reruns; --alignment 1 turns its canary report into the fault at the bad write", async () => {
    const rec = await recorded(process.execPath, (dir) => [
      MATE_NODE_TEST,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--no-guard-rerun',
      'examples/node-test/gap-overflow.test.mjs',
      'examples/node-test/clean.test.mjs',
    ]);
    assert.equal(rec.code, 1, rec.output);
    // node --test indents what a test threw: the report lines are matched where they stand.
    assert.match(
      rec.output,
      /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged/,
    );
    const record = JSON.parse(fs.readFileSync(path.join(rec.dir, 'replay.json'), 'utf8'));
    assert.equal(record.runner, 'node-test');
    assert.equal(record.cwd, ROOT);
    assert.equal(record.settings.alignment, 16);

    // From another directory, given the --guard-report-dir that holds the one run.
    const same = await replay([rec.parent]);
    assert.equal(same.code, 1, same.output);
    assert.match(
      same.stderr,
      new RegExp(
        `^\\[mate-guard\\] replaying test ${GAP_TEST.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(node-test\\) in tail mode, alignment 16\\n`,
      ),
    );
    assert.match(
      same.output,
      /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged\n *==mate-guard== test: examples\/node-test\/gap-overflow\.test\.mjs > alignment-gap overflow > writes at index length \+ 1/,
    );
    assert.doesNotMatch(same.output, /sums a buffer|clean\.test\.mjs/, 'the passing file does not rerun');

    const exact = await replay([rec.dir, '--alignment', '1']);
    assert.equal(exact.code, 1, exact.output);
    const fault = reportOf(unindent(exact.output), 'ERROR: heap-buffer-overflow');
    assert.match(fault, /on WRITE at 0x[0-9a-f]+: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/);
    assert.match(fault, new RegExp(`test: ${GAP_TEST.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(fault, /#0 WriteAt .*buggy\.cc:\d+/);
    assert.match(fault, /alignment 1, backend host/);
    assert.doesNotMatch(exact.output, /sums a buffer/);

    // A CI artifact: recorded in a checkout at another path, replayed in this one.
    const ci = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-ci-'));
    fs.cpSync(rec.dir, ci, { recursive: true });
    const moved = '/ci/runner/work/project';
    const rewrite = (v) => (typeof v === 'string' ? v.split(ROOT).join(moved) : v);
    fs.writeFileSync(
      path.join(ci, 'replay.json'),
      JSON.stringify({ ...record, cwd: moved, argv: record.argv.map(rewrite) }),
    );
    const local = await replay([ci, '--alignment', '1'], { cwd: ROOT });
    assert.equal(local.code, 1, local.output);
    assert.match(
      local.stderr,
      new RegExp(
        `alignment 1 \\(recorded in ${moved}, which is not here: replaying in ${ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)\n`,
      ),
    );
    assert.match(
      reportOf(unindent(local.output), 'ERROR: heap-buffer-overflow'),
      /2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\)/,
    );
  });

  test("mocha: the fault reproduces in the same test, the passing spec does not rerun; exit is mocha's (killed: 139)", async () => {
    const rec = await recorded(process.execPath, (dir) => [
      MATE_MOCHA,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      'examples/mocha/overflow.spec.cjs',
      'examples/mocha/clean.spec.cjs',
    ]);
    assert.notEqual(rec.code, 0, rec.output);
    const r = await replay([rec.dir]);
    assert.equal(r.code, 139, r.output);
    assert.match(
      r.stderr,
      /^\[mate-guard\] replaying test examples\/mocha\/overflow\.spec\.cjs > overflow by one > fills a 64-byte buffer \(mocha\) in tail mode, alignment 16\n/,
    );
    // The command, as run: the mate-mocha installed here, the recorded spec files, the failing test's title.
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] replay runs in ${escape(ROOT)}: ${escape(process.execPath)} ${escape(path.join(ROOT, 'node_modules', '@mate-guard', 'mocha', 'bin', 'mate-mocha.js'))} ` +
          `examples/mocha/overflow\\.spec\\.cjs examples/mocha/clean\\.spec\\.cjs --grep '\\^\\(\\?:overflow by one fills a 64-byte buffer\\)\\$'$`,
        'm',
      ),
    );
    assert.doesNotMatch(r.stderr, /left out of the replay/);
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-overflow'),
      /test: examples\/mocha\/overflow\.spec\.cjs > overflow by one > fills a 64-byte buffer/,
    );
    assert.doesNotMatch(r.output, /sums a buffer/);
    // --guard-mode head: the same test, the guard before the start: the overrun lands in canary bytes.
    const head = await replay([rec.dir, '--guard-mode', 'head']);
    assert.equal(head.code, 1, head.output);
    assert.match(
      reportOf(head.output, 'ERROR: canary-corruption'),
      /1 byte past the end of allocation #\d+ \(64 bytes, head mode\)/,
    );
  });

  test('jest: --runTestsByPath on the failing file, the failing test alone', async () => {
    const rec = await recorded(process.execPath, (dir) => [
      MATE_JEST,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--no-guard-rerun',
      '-c',
      'examples/jest/jest.config.js',
      'gap-overflow',
      'clean',
    ]);
    assert.equal(rec.code, 1, rec.output);
    assert.match(rec.output, /Tests: +1 failed, \d+ passed, \d+ total/);
    const r = await replay([rec.dir]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Test Suites: 1 failed, 1 total/);
    assert.match(r.output, /Tests: +1 failed, 1 total/);
    // Jest indents what a test threw: the report lines are matched where they stand.
    assert.match(
      r.output,
      /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged\n *==mate-guard== test: examples\/jest\/gap-overflow\.test\.js > writeAt > writes the last byte of a 13-byte record/,
    );
  });

  test('jest, sharded with -w 2: the replay drops the shard (it would hold no test), keeps -w 2 with its value', async () => {
    // Shard 2/2 of overflow.test.js and gap-overflow.test.js is gap-overflow.test.js (Jest sorts by a hash of the path).
    const rec = await recorded(process.execPath, (dir) => [
      MATE_JEST,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      '--no-guard-rerun',
      '-c',
      'examples/jest/jest.config.js',
      '--shard=2/2',
      '-w',
      '2',
      'overflow.test',
    ]);
    assert.equal(rec.code, 1, rec.output);
    const r = await replay([rec.dir]);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Tests: +1 failed, 1 total/);
    assert.match(
      r.output,
      /==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged\n *==mate-guard== test: examples\/jest\/gap-overflow\.test\.js > writeAt > writes the last byte of a 13-byte record/,
    );
  });

  test('vitest, sharded: the replay drops --shard and runs the failing file', async () => {
    // Shard 2/2 of gap.test.mjs and overflow.test.mjs is gap.test.mjs (Vitest sorts by a hash of the path).
    const rec = await recorded(
      process.execPath,
      (dir) => [
        MATE_VITEST,
        'run',
        '--shard=2/2',
        'gap',
        'overflow',
        '--guard-alloc',
        '--guard-report-dir',
        dir,
        '--no-guard-rerun',
      ],
      { cwd: path.join(ROOT, 'test', 'fixtures', 'vitest', 'bugs') },
    );
    assert.equal(rec.code, 1, rec.output);
    const r = await replay([rec.dir, '--alignment=1']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Tests +1 failed \(1\)/);
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-overflow'),
      /test: gap\.test\.mjs > writeAt past the end into the alignment gap/,
    );
  });

  test('vitest (mate-vitest in the example project): the failing file and test alone', async () => {
    const rec = await recorded(
      process.execPath,
      (dir) => [
        MATE_VITEST,
        'run',
        '--guard-alloc',
        '--guard-report-dir',
        dir,
        '--no-guard-rerun',
        'alignment-gap.test.mjs',
        'clean.test.mjs',
      ],
      { cwd: path.join(EX, 'vitest') },
    );
    assert.equal(rec.code, 1, rec.output);
    const r = await replay([rec.dir, '--alignment=1']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /Test Files +1 failed \(1\)/);
    assert.match(r.output, /Tests +1 failed \(1\)/);
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-overflow'),
      /test: alignment-gap\.test\.mjs > alignment gap > writeAt\(buf, length \+ 1\) damages the gap canary/,
    );
  });

  test('plain vitest with guard flags after --: --guard-mode head wins over the recorded flags', async () => {
    const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const rec = await recorded(
      process.execPath,
      (dir) => [
        VITEST,
        'run',
        'alignment-gap.test.mjs',
        'clean.test.mjs',
        '--',
        '--guard-alloc',
        '--guard-mode',
        'tail',
        '--guard-report-dir',
        dir,
      ],
      { cwd: path.join(EX, 'vitest') },
    );
    assert.equal(rec.code, 1, rec.output);
    const r = await replay([rec.dir, '--guard-mode', 'head']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /\[mate-guard\] guarding on: mode head/);
    assert.match(r.output, /Tests +1 failed \(1\)/);
    assert.match(
      reportOf(r.output, 'ERROR: canary-corruption'),
      /2 bytes past the end of allocation #\d+ \(13 bytes, head mode\) damaged/,
    );
  });

  test("mate guard-run: its command runs only with --trust-record, printed first; then the whole command again, with its settings; exit is the command's", async () => {
    const rec = await recorded(process.execPath, (dir) => [
      MATE,
      'guard-run',
      '--report-dir',
      dir,
      '--no-rerun',
      '--log-allocations',
      '--',
      process.execPath,
      'examples/scripts/gap-overflow.js',
    ]);
    assert.equal(rec.code, 1, rec.output);
    const refused = await replay([rec.dir, '--alignment', '1']);
    assert.equal(refused.code, 2, refused.output);
    assert.equal(
      refused.stderr,
      `mate: replay: ${rec.dir}/replay.json records a mate guard-run command (${process.execPath} examples/scripts/gap-overflow.js), which replay does not run from a record; read it, then give --trust-record to run it as recorded\n`,
    );
    assert.equal(refused.stdout, '');

    const r = await replay([rec.dir, '--alignment', '1', '--trust-record']);
    assert.equal(r.code, 139, r.output);
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] replaying the whole recorded command \\(mate guard-run\\) in tail mode, alignment 1\\n` +
          `\\[mate-guard\\] taken as recorded \\(--trust-record\\): the guard-run command\\n` +
          `\\[mate-guard\\] replay runs in ${escape(ROOT)}: mate guard-run -- ${escape(process.execPath)} examples/scripts/gap-overflow\\.js\\n`,
      ),
    );
    assert.match(
      reportOf(r.output, 'ERROR: heap-buffer-overflow'),
      /2 bytes past the end of allocation #1 \(13 bytes, tail mode\)/,
    );
    assert.match(
      r.output,
      /\[mate-guard\] alloc #1 ptr=0x[0-9a-f]+ requested=13/,
      'the recorded --log-allocations holds',
    );
  });

  test('mate --help lists replay; mate replay --help says what it takes', async () => {
    const help = await run(process.execPath, [MATE, '--help']);
    assert.equal(help.code, 0, help.output);
    assert.match(help.stdout, /^ {2}replay <report-dir> \[options\] +rerun what a recorded run ran/m);
    const usage = await run(process.execPath, [MATE, 'replay', '--help']);
    assert.equal(usage.code, 0, usage.output);
    assert.match(
      usage.stdout,
      /^Usage: mate replay <report-dir> \[--guard-mode tail\|head\] \[--alignment <n>\] \[--\[no-\]launch-blocking\] \[--dump-inputs <kernel-glob>\] \[--trust-record\]/,
    );
    assert.match(usage.stdout, /^ {2}--trust-record {13}run what the record says though replay does not vouch for it/m);
  });

  test('bad input: one line, exit 2', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-empty-'));
    const noRecord = await replay([empty]);
    assert.equal(noRecord.code, 2, noRecord.output);
    assert.equal(
      noRecord.stderr,
      `mate: ${JSON.stringify(empty)} holds no run record (replay.json): give the report directory of a run made by a mate-* CLI, a runner with the mate-guard plugin, or mate guard-run\n`,
    );

    const missing = await replay([path.join(empty, 'nope')]);
    assert.equal(missing.code, 2, missing.output);
    assert.match(
      missing.stderr,
      /^mate: ".*nope" is not a directory: give a run's report directory \(the path after "\[mate-guard\] reports:"\)\n$/,
    );

    const none = await replay([]);
    assert.equal(none.code, 2, none.output);
    assert.equal(none.stderr, 'mate: replay: no report directory given: mate replay <report-dir>\n');

    const dir = path.join(empty, 'run');
    fs.mkdirSync(dir);
    const record = {
      tool: 'mate-guard',
      version: 1,
      runner: 'karma',
      cwd: ROOT,
      execArgv: [],
      argv: ['karma'],
      settings: { mode: 'tail', alignment: 16 },
      explicit: [],
    };
    fs.writeFileSync(path.join(dir, 'replay.json'), JSON.stringify(record));
    const unknown = await replay([dir]);
    assert.equal(unknown.code, 2, unknown.output);
    assert.equal(
      unknown.stderr,
      `mate: replay: ${dir}/replay.json names the runner "karma", which no installed @mate-guard package adapts; known here: jest, mocha, node-test, vitest, run\n`,
    );

    const mode = await replay([dir, '--guard-mode', 'sideways']);
    assert.equal(mode.code, 2, mode.output);
    assert.equal(mode.stderr, 'mate: --guard-mode: "sideways" is not a guard mode; use tail or head\n');
    const alignment = await replay([dir, '--alignment', '3']);
    assert.equal(alignment.code, 2, alignment.output);
    assert.equal(alignment.stderr, 'mate: --alignment: "3" is not allowed; use a power of two from 1 to 4096\n');
    const option = await replay([dir, '--fast']);
    assert.equal(option.code, 2, option.output);
    // Its settings flags are the settings table's replay rows: their list comes from the table.
    assert.equal(
      option.stderr,
      'mate: replay: unknown option "--fast"; known: --mode, --alignment, --launch-blocking, --no-launch-blocking, --dump-inputs (each also as --guard-<name>), --trust-record, --dry-run, --help\n',
    );
    const both = await replay([dir, '--mode=head', '--guard-alignment', '3']);
    assert.equal(both.code, 2, both.output);
    assert.equal(both.stderr, 'mate: --guard-alignment: "3" is not allowed; use a power of two from 1 to 4096\n');
    const negated = await replay([dir, '--no-alignment']);
    assert.equal(negated.code, 2, negated.output);
    assert.equal(negated.stderr, 'mate: --no-alignment: there is no negative form of --alignment\n');

    // --launch-blocking and --dump-inputs act only where the recorded run had the device guard (this one had not);
    // named as given. Turning it off asks for nothing: the replay goes on (to the unknown runner).
    const blocking = await replay([dir, '--guard-launch-blocking']);
    assert.equal(blocking.code, 2, blocking.output);
    assert.equal(
      blocking.stderr,
      'mate: --guard-launch-blocking: needs the device guard (the recorded run had it off); without it no CUDA memory is guarded and the setting would do nothing\n',
    );
    assert.match((await replay([dir, '--no-launch-blocking'])).stderr, /names the runner "karma"/);
    const cuda = path.join(empty, 'cuda');
    fs.mkdirSync(cuda);
    const withDevice = { ...record, settings: { ...record.settings, device: 'cuda' } };
    fs.writeFileSync(path.join(cuda, 'replay.json'), JSON.stringify(withDevice));
    const dumps = await replay([cuda, '--launch-blocking', '--dump-inputs', '*k*']);
    assert.equal(dumps.code, 2, dumps.output);
    assert.match(dumps.stderr, /names the runner "karma"/);
  });
});

// A device fault recorded by guard-run over the simulated CUDA driver:
// the replay turns launch blocking on by itself.
describe('mate replay of a device fault (simulated CUDA driver)', { skip: noGxx() }, () => {
  test("launch blocking on by itself; --dump-inputs given to the replay, or recorded, saves the kernel's inputs in the replay's directory", async () => {
    const fake = buildFakeDriver('mate-replay-sim-');
    const matrix = buildMatrix(fake);
    const env = { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake };
    const lib = path.join(PKG, 'core-native', 'build', 'Release', 'libmate_guard_cuda.so');
    const savedInputs = (output) => {
      const dir = /\[mate-guard\] reports: (\S+)/.exec(output)[1];
      return fs.existsSync(path.join(dir, 'inputs'))
        ? fs.readdirSync(path.join(dir, 'inputs')).filter((f) => f.endsWith('.bin'))
        : [];
    };

    const plain = await recorded(
      process.execPath,
      (dir) => [MATE, 'guard-run', '--device', 'cuda', '--report-dir', dir, '--', matrix, lib, 'fault'],
      { env },
    );
    assert.equal(plain.code, 1, plain.output);
    const asked = await replay([plain.dir, '--dump-inputs', '*FillInclusive*', '--trust-record'], { env });
    assert.equal(asked.code, 1, asked.output);
    assert.match(
      asked.stderr,
      /^\[mate-guard\] replaying the whole recorded command \(mate guard-run\) in tail mode, alignment 16, launch blocking, saving the inputs of "\*FillInclusive\*"\n/,
    );
    assert.match(asked.output, /==mate-guard== ERROR: illegal-address: the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS/);
    assert.equal(savedInputs(asked.output).length, 1, asked.output);

    const withDumps = await recorded(
      process.execPath,
      (dir) => [
        MATE,
        'guard-run',
        '--device',
        'cuda',
        '--report-dir',
        dir,
        '--dump-inputs',
        '*FillInclusive*',
        '--',
        matrix,
        lib,
        'fault',
      ],
      { env },
    );
    assert.equal(withDumps.code, 1, withDumps.output);
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(withDumps.dir, 'replay.json'), 'utf8')).settings.dumpInputs,
      '*FillInclusive*',
    );
    const kept = await replay([withDumps.dir, '--trust-record'], { env });
    assert.equal(kept.code, 1, kept.output);
    assert.match(kept.stderr, /launch blocking, saving the inputs of "\*FillInclusive\*"\n/);
    assert.equal(savedInputs(kept.output).length, 1, kept.output);
  });
});

// A report directory is data from wherever the run happened (a fork's pull
// request included): records written by someone else, replayed from this
// checkout. What they ask for runs nowhere; the test they name still
// reproduces where the checkout has it.
describe('mate replay runs only what this checkout would run', () => {
  let mocha; // a real mate-mocha run of the example's overflow (its run directory)
  const OVERFLOW = 'examples/mocha/overflow.spec.cjs > overflow by one > fills a 64-byte buffer';
  before(async () => {
    mocha = await recorded(process.execPath, (dir) => [
      MATE_MOCHA,
      '--guard-alloc',
      '--guard-report-dir',
      dir,
      'examples/mocha/overflow.spec.cjs',
      'examples/mocha/clean.spec.cjs',
    ]);
    assert.equal(mocha.code, 139, mocha.output);
  });

  /** A copy of `dir` with its record and violation events edited: an artifact someone else wrote. */
  function forged(dir, edit, editEvent = (e) => e) {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-forged-'));
    fs.cpSync(dir, copy, { recursive: true });
    const file = path.join(copy, 'replay.json');
    fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(fs.readFileSync(file, 'utf8')))));
    for (const f of fs.readdirSync(copy).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f))) {
      fs.writeFileSync(
        path.join(copy, f),
        JSON.stringify(editEvent(JSON.parse(fs.readFileSync(path.join(copy, f), 'utf8')))),
      );
    }
    return copy;
  }

  /** A directory elsewhere and a program that leaves a marker file in it when it runs. */
  function attacker() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-attacker-'));
    const marker = path.join(dir, 'ran');
    const code = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`;
    const script = path.join(dir, 'evil.cjs');
    fs.writeFileSync(script, `${code};\n`);
    return { dir, marker, code, script };
  }

  test('-e, a --require from elsewhere and an --import of data: in the record do not run; the test reproduces; each is named', async () => {
    const a = attacker();
    const dataUrl = `data:text/javascript,${a.code.replace("require('fs')", '(await import("node:fs"))')}`;
    const dir = forged(mocha.dir, (r) => ({
      ...r,
      execArgv: ['-e', a.code, '--require', a.script, '--import', dataUrl, '--expose-gc', '--title', 'x\x1b[8mhidden'],
    }));
    const r = await replay([dir]);
    assert.equal(r.code, 139, r.output);
    assert.equal(fs.existsSync(a.marker), false, 'no code from the record ran');
    const lines = r.stderr.split('\n');
    assert.equal(lines[0], `[mate-guard] replaying test ${OVERFLOW} (mocha) in tail mode, alignment 16`);
    assert.equal(
      lines[1],
      `[mate-guard] left out of the replay: -e '${a.code.replace(/'/g, `'\\''`)}' (code from the record), ` +
        `--require ${a.script} (outside ${ROOT}), --import '${dataUrl.replace(/'/g, `'\\''`)}' (code from the record)`,
    );
    // Shown, never obeyed by the terminal: an escape sequence in the record is spelled out.
    assert.match(
      lines[2],
      new RegExp(
        `^\\[mate-guard\\] replay runs in ${escape(ROOT)}: ${escape(process.execPath)} --expose-gc --title \\$'x\\\\x1b\\[8mhidden' ${escape(path.join(ROOT, 'node_modules', '@mate-guard', 'mocha', 'bin', 'mate-mocha.js'))} `,
      ),
    );
    assert.doesNotMatch(r.stderr, /\x1b/);
    assert.match(reportOf(r.output, 'ERROR: heap-buffer-overflow'), new RegExp(`test: ${escape(OVERFLOW)}`));
  });

  test("a runner script outside the project: the project's own mocha runs instead; a script that is no runner's entry point stops the replay (exit 2)", async () => {
    const a = attacker();
    const bin = path.join(a.dir, 'node_modules', '.bin', 'mocha');
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    fs.copyFileSync(a.script, bin);
    const plain = (script) => (r) => ({
      ...r,
      argv: [
        script,
        '--require',
        '@mate-guard/mocha',
        'examples/mocha/overflow.spec.cjs',
        'examples/mocha/clean.spec.cjs',
      ],
    });
    const r = await replay([forged(mocha.dir, plain(bin))]);
    assert.equal(r.code, 139, r.output);
    assert.equal(fs.existsSync(a.marker), false, 'the recorded script did not run');
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] replay runs in ${escape(ROOT)}: ${escape(process.execPath)} ${escape(path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'))} ` +
          `examples/mocha/overflow\\.spec\\.cjs examples/mocha/clean\\.spec\\.cjs --require @mate-guard/mocha --grep `,
        'm',
      ),
    );
    assert.match(reportOf(r.output, 'ERROR: heap-buffer-overflow'), new RegExp(`test: ${escape(OVERFLOW)}`));

    const dir = forged(mocha.dir, plain(a.script));
    const stopped = await replay([dir]);
    assert.equal(stopped.code, 2, stopped.output);
    // The plan is printed first (before any package of the checkout loads), then why it stops.
    assert.equal(
      stopped.stderr.split('\n').slice(-2)[0],
      `mate: replay: ${dir}/replay.json says the run started ${JSON.stringify(a.script)}, which replay does not run from a record (mocha's entry point is mate-mocha or mocha); read it, then give --trust-record to run it as recorded`,
    );
    assert.equal(fs.existsSync(a.marker), false);
  });

  test("a failing test's file outside the directory (../../...) does not run: it is named, the others replay; with none left, the replay stops (exit 2)", async () => {
    const a = attacker();
    const spec = path.join(a.dir, 'overflow.spec.cjs');
    fs.copyFileSync(a.script, spec);
    const outside = path.relative(ROOT, spec);
    assert.match(outside, /^\.\.\//);
    // The fault names the test outside; its allocation, the example's.
    const one = forged(
      mocha.dir,
      (r) => r,
      (e) => ({ ...e, test: e.test.replace('examples/mocha/overflow.spec.cjs', outside) }),
    );
    const r = await replay([one]);
    assert.equal(r.code, 139, r.output);
    assert.equal(fs.existsSync(a.marker), false, 'the test file outside did not run');
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] left out of the replay: ${escape(outside)} \\(a failing test's file, outside ${escape(ROOT)}\\)$`,
        'm',
      ),
    );
    assert.match(reportOf(r.output, 'ERROR: heap-buffer-overflow'), new RegExp(`test: ${escape(OVERFLOW)}`));

    const all = forged(
      mocha.dir,
      (r) => r,
      (e) => JSON.parse(JSON.stringify(e).split('examples/mocha/overflow.spec.cjs').join(outside)),
    );
    const none = await replay([all]);
    assert.equal(none.code, 2, none.output);
    assert.equal(
      none.stderr.split('\n').slice(-2)[0],
      `mate: replay: ${all}/replay.json names no failing test's file that replay runs here: ${outside} (a failing test's file, outside ${ROOT})`,
    );
    assert.equal(fs.existsSync(a.marker), false, 'the test file outside did not run');
  });

  test('a recorded working directory outside the checkout, with its own node_modules: the replay runs here, with the mocha installed here', async () => {
    const a = attacker();
    // Someone else's project: a mocha whose bin leaves the marker.
    const pkg = path.join(a.dir, 'node_modules', 'mocha');
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: 'mocha', bin: { mocha: './bin/mocha.js' } }),
    );
    fs.copyFileSync(a.script, path.join(pkg, 'bin', 'mocha.js'));
    const dir = forged(mocha.dir, (r) => ({
      ...r,
      cwd: a.dir,
      argv: [path.join(pkg, 'bin', 'mocha.js'), '--require', '@mate-guard/mocha', 'examples/mocha/overflow.spec.cjs'],
    }));
    const r = await replay([dir]);
    assert.equal(r.code, 139, r.output);
    assert.equal(fs.existsSync(a.marker), false, 'nothing of the recorded directory ran');
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] replaying test .* in tail mode, alignment 16 \\(recorded in ${escape(a.dir)}, which is not in ${escape(ROOT)}: replaying here\\)\n` +
          `\\[mate-guard\\] replay runs in ${escape(ROOT)}: ${escape(process.execPath)} ${escape(path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'))} examples/mocha/overflow\\.spec\\.cjs --require @mate-guard/mocha --grep `,
      ),
    );
    assert.match(reportOf(r.output, 'ERROR: heap-buffer-overflow'), new RegExp(`test: ${escape(OVERFLOW)}`));
  });

  test('a guard-run command in a record does not run without --trust-record', async () => {
    const a = attacker();
    const dir = forged(mocha.dir, (r) => ({
      ...r,
      runner: 'run',
      argv: [MATE, 'guard-run', '--', process.execPath, '-e', a.code],
    }));
    const r = await replay([dir]);
    assert.equal(r.code, 2, r.output);
    assert.match(
      r.stderr,
      /^mate: replay: .*replay\.json records a mate guard-run command \(.*\), which replay does not run from a record; read it, then give --trust-record to run it as recorded\n$/,
    );
    assert.equal(fs.existsSync(a.marker), false);
  });

  test('an option replay does not know is left out and named; --trust-record takes it as recorded, saying so', async () => {
    const dir = forged(mocha.dir, (r) => ({ ...r, argv: [...r.argv, '--reporter-option', 'maxDiffSize=100'] }));
    const r = await replay([dir]);
    assert.equal(r.code, 139, r.output);
    assert.match(
      r.stderr,
      /^\[mate-guard\] left out of the replay: --reporter-option maxDiffSize=100 \(not a mocha argument replay knows: --trust-record takes it\)$/m,
    );
    assert.doesNotMatch(r.stderr, /^\[mate-guard\] replay runs in .*maxDiffSize/m);
    const t = await replay([dir, '--trust-record']);
    assert.equal(t.code, 139, t.output);
    assert.match(t.stderr, /^\[mate-guard\] taken as recorded \(--trust-record\): --reporter-option maxDiffSize=100$/m);
    assert.match(t.stderr, /^\[mate-guard\] replay runs in .* --reporter-option maxDiffSize=100 --grep /m);
    assert.doesNotMatch(t.stderr, /left out of the replay/);
  });

  test('settings in the record are read as any other input: a bad one stops the replay (exit 2), naming it; a suppressions file from elsewhere is not read', async () => {
    const dir = forged(mocha.dir, (r) => ({ ...r, settings: { ...r.settings, alignment: 3 } }));
    const r = await replay([dir]);
    assert.equal(r.code, 2, r.output);
    assert.equal(
      r.stderr,
      `mate: ${dir}/replay.json: settings.alignment: 3 is not allowed; use a power of two from 1 to 4096\n`,
    );

    // One that would silence the fault.
    const a = attacker();
    const quiet = path.join(a.dir, 'suppressions.txt');
    fs.writeFileSync(quiet, 'heap-buffer-overflow function=FillInclusive\n');
    const s = await replay([
      forged(mocha.dir, (rec) => ({ ...rec, settings: { ...rec.settings, suppressions: quiet } })),
    ]);
    assert.equal(s.code, 139, s.output);
    assert.match(
      s.stderr,
      new RegExp(
        `^\\[mate-guard\\] left out of the replay: the suppressions file ${escape(quiet)} \\(outside ${escape(ROOT)}\\)$`,
        'm',
      ),
    );
    assert.match(s.output, /\[mate-guard\] summary: .* 1 violation, /);
  });

  test('from inside the report directory: stops (exit 2), nothing runs there', async () => {
    const r = await replay(['.'], { cwd: mocha.dir });
    assert.equal(r.code, 2, r.output);
    assert.equal(
      r.stderr,
      `mate: replay: run it from the project's checkout, not from inside the report directory ${mocha.dir}\n`,
    );
  });

  test('from a subfolder of the checkout: the replay runs as from its top (the git work tree), in the recorded directory', async () => {
    const r = await replay([mocha.dir], { cwd: path.join(ROOT, 'examples', 'mocha') });
    assert.equal(r.code, 139, r.output);
    assert.doesNotMatch(r.stderr, /left out of the replay|which is not/);
    assert.match(
      r.stderr,
      new RegExp(`^\\[mate-guard\\] replay runs in ${escape(ROOT)}: .* examples/mocha/overflow\\.spec\\.cjs `, 'm'),
    );
    assert.match(reportOf(r.output, 'ERROR: heap-buffer-overflow'), new RegExp(`test: ${escape(OVERFLOW)}`));
  });

  test('from a folder below the recorded directory, with no git checkout around it: stops (exit 2), saying in one line where to run it', async () => {
    const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-replay-nogit-')));
    fs.mkdirSync(path.join(project, 'test'));
    const dir = forged(mocha.dir, (r) => ({ ...r, cwd: project }));
    const r = await replay([dir], { cwd: path.join(project, 'test') });
    assert.equal(r.code, 2, r.output);
    assert.equal(
      r.stderr,
      `mate: replay: the run was made in ${project}, above ${path.join(project, 'test')}, which is no git checkout: run mate replay from ${project}\n`,
    );
  });
});
