// The crash printer (mate-guard-print) is the only printer a dying process
// starts, whatever the run holds: it matches the run's suppressions and,
// where the dying process owns the run, first shows what that process had
// reported to its test runner, which dies with it (and a CLI that outlives
// it shows them under the same line). Real faults in the example addon,
// under guard-run, plain Jest in band and mate-jest.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT, guardRun, reportLines, run } from './helpers/run.mjs';

const SIGSEGV_EXIT = 139;
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

/** The event files under `dir`, parsed. */
const events = (dir) =>
  fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => /(^|\/)mate-guard-\d+-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));

test('a dying process whose run has suppressions: the printer matches them, says by which rule, files the verdict, and the run counts it suppressed', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-crash-printer-'));
  try {
    const supp = path.join(dir, 'known.supp');
    fs.writeFileSync(
      supp,
      '# the addon passes a bad length; fix pending\nheap-buffer-overflow function=ExtractStrings\n',
    );
    const reports = path.join(dir, 'reports');
    const r = await guardRun(
      ['--suppressions', supp, '--report-dir', reports],
      [path.join(ROOT, 'test', 'fixtures', 'core', 'extract-strings.js')],
    );
    assert.equal(r.code, SIGSEGV_EXIT, `a suppressed fault still ends its process\n${r.output}`);
    const lines = reportLines(r.output);
    assert.match(lines[0], /^==mate-guard== ERROR: heap-buffer-overflow on READ /);
    const by = `==mate-guard== suppressed by ${supp}:2 (heap-buffer-overflow function=ExtractStrings): counted, not failed; a fault still ends its process`;
    assert.ok(lines.includes(by), r.output);
    const [event] = events(reports);
    assert.deepEqual(event.suppressed, { file: supp, line: 2, rule: 'heap-buffer-overflow function=ExtractStrings' });
    assert.ok(event.text.includes(`${by}\n`), 'the printed text is filed with the verdict');
    assert.match(r.output, /^\[mate-guard\] summary: .*0 violations, 1 suppressed, 1 process died, /m);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('Jest in band killed by a guard fault: the printer shows the canary report Jest never showed, then the fault', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-crash-earlier-'));
  try {
    const config = path.join(ROOT, 'test', 'fixtures', 'jest', 'earlier-then-fault', 'jest.config.js');
    const r = await run(
      process.execPath,
      [JEST, '-c', config, '-i', '--reporters=default', '--reporters=@mate-guard/jest-env/reporter'],
      { env: { MATE_JEST_GUARD_ALLOC: '1', MATE_JEST_GUARD_REPORT_DIR: dir }, timeout: 90_000 },
    );
    assert.equal(r.signal, 'SIGSEGV', r.output);
    const lines = r.stderr.split('\n');
    const header = lines.indexOf(
      '[mate-guard] this process gave its test runner a report before the guard fault killed it; the runner never showed it:',
    );
    assert.ok(header >= 0, r.output);
    assert.match(
      lines[header + 1],
      /^==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged$/,
    );
    const fault = lines.findIndex((l) => l.startsWith('==mate-guard== ERROR: heap-buffer-overflow on WRITE'));
    assert.ok(fault > header + 1, 'the earlier report comes first, then the fault');
    assert.match(r.stderr, /^\[mate-guard\] the process that owned this run dies with it, so no summary follows; /m);
    assert.equal(
      r.stderr.split('\n').filter((l) => l.startsWith('==mate-guard== ERROR: canary-corruption')).length,
      1,
      'shown once',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("mate-jest outlives Jest in band killed by a guard fault: it shows the canary report Jest never showed, under the crash printer's own header line", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-crash-earlier-cli-'));
  try {
    const config = path.join(ROOT, 'test', 'fixtures', 'jest', 'earlier-then-fault', 'jest.config.js');
    const r = await run(
      process.execPath,
      [
        path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js'),
        '--guard-alloc',
        '--no-guard-rerun',
        '--guard-report-dir',
        dir,
        '-i',
        '-c',
        config,
      ],
      { timeout: 90_000 },
    );
    assert.equal(r.code, SIGSEGV_EXIT, r.output);
    const lines = r.stderr.split('\n');
    // The line earlier_header.cc words for the printer ("this process"), naming the process mate-jest saw die.
    const header = lines.findIndex((l) =>
      /^\[mate-guard\] the Jest process \(in band\) \d+ gave its test runner a report before the guard fault killed it; the runner never showed it:$/.test(
        l,
      ),
    );
    assert.ok(header >= 0, r.output);
    assert.match(
      lines[header + 1],
      /^==mate-guard== ERROR: canary-corruption: 2 bytes past the end of allocation #\d+ \(13 bytes, tail mode\) damaged$/,
    );
    assert.equal(
      r.stderr.split('\n').filter((l) => l.startsWith('==mate-guard== ERROR: canary-corruption')).length,
      1,
      'shown once',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a report folder open to others: a link planted at <event>.printing is removed, never written through; the file it named is unchanged and the event is filed', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-crash-planted-'));
  try {
    const shared = path.join(dir, 'shared');
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o777);
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'VICTIM ORIGINAL CONTENT\n');
    const script = `require(${JSON.stringify(path.join(ROOT, 'packages', 'core-native'))}).installGuardAllocator({});
require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))}).fillInclusive(Buffer.alloc(64));`;
    // The pid is known before the process runs: the shell plants the link, then becomes node.
    const r = await run(
      'sh',
      [
        '-c',
        `ln -s "$1" "$2/mate-guard-$$-1.json.printing" && exec "$3" -e "$4"`,
        'sh',
        victim,
        shared,
        process.execPath,
        script,
      ],
      { env: { MATE_GUARD_REPORT_DIR: shared } },
    );
    assert.ok(r.signal === 'SIGSEGV' || r.code === SIGSEGV_EXIT, r.output);
    assert.match(r.stderr, /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/m);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'VICTIM ORIGINAL CONTENT\n');
    const names = fs.readdirSync(shared);
    assert.deepEqual(
      names.filter((n) => n.endsWith('.printing')),
      [],
      names.join(' '),
    );
    const [name] = names.filter((n) => /^mate-guard-\d+-1\.json$/.test(n));
    assert.ok(fs.lstatSync(path.join(shared, name)).isFile(), 'the event is a file of the folder, not a link');
    assert.match(
      events(shared)[0].text,
      /^==mate-guard== ERROR: heap-buffer-overflow on WRITE/,
      'the printed text is filed',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
