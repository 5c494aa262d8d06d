// One formatter, three ways in: the same recorded events (test/fixtures/events:
// host, native heap, device, death, out-of-memory; test/fixtures/unreadable-events: an unreadable file)
// rendered by Node (`mate report`), by Python (`python -m mate_guard report`,
// through libmate_guard_cuda.so's C ABI) and by the crash printer a dying
// process starts (mate-guard-print) give the same text, byte for byte; both
// readers give the same SARIF log and GitHub annotations; and `mate report`
// names an event of the wrong shape by its file and field. Each event says
// who wrote it (runtime, machinery folders): a reader of another runtime
// renders it as its writer would.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { noPython } from './helpers/python.mjs';
import { guardRun, MATE, ROOT, run } from './helpers/run.mjs';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'events');
const PRINTER = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'mate-guard-print');
const pythonEnv = { PYTHONPATH: path.join(ROOT, 'packages', 'python') };

/** A report directory holding the fixture `name` as the event file of process 4242. */
function reportDir(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-'));
  const file = path.join(dir, 'mate-guard-4242-1.json');
  fs.copyFileSync(path.join(FIXTURES, `${name}.json`), file);
  return { dir, file };
}

const onPath = (tool) =>
  (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, tool)));
const NO_SYMBOLIZER =
  !onPath('llvm-symbolizer') && !onPath('addr2line') && 'neither llvm-symbolizer nor addr2line is on PATH';

const reportText = (output) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('==mate-guard== '))
    .join('\n');

describe('the same event renders the same text through Node, Python and the crash printer', {
  skip: noPython(),
}, () => {
  const NAMES = [
    'overflow',
    'native-heap-overflow',
    'cuda-illegal-address',
    'cuda-cross-stream-free',
    'death-free-bypassing-router',
    'death-uncaught-exception',
    'cuda-out-of-memory',
  ];
  // The report blocks of an output, each from its ERROR line, in a stable order.
  const blocks = (output) =>
    reportText(output)
      .split(/\n(?===mate-guard== ERROR: )/)
      .filter((b) => b)
      .sort();

  test(`${NAMES.join(', ')}: one report directory, read by Node and by Python, each event printed by the crash printer`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-'));
    const files = NAMES.map((name, i) => {
      const file = path.join(dir, `mate-guard-${4000 + i}-1.json`);
      fs.copyFileSync(path.join(FIXTURES, `${name}.json`), file);
      return file;
    });
    const node = await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT });
    const py = await run('python3', ['-m', 'mate_guard', 'report', dir], { cwd: ROOT, env: pythonEnv });
    const nodeBlocks = blocks(node.stdout);
    assert.equal(nodeBlocks.length, NAMES.length, node.output);
    assert.deepEqual(blocks(py.stdout), nodeBlocks, 'Python');
    assert.equal(py.code, 1, py.output);
    assert.equal(node.code, 1, node.output);
    for (const file of files) {
      const printer = await run(PRINTER, [file], { cwd: ROOT });
      assert.equal(printer.code, 0, printer.output);
      const [text] = blocks(printer.stderr);
      assert.ok(nodeBlocks.includes(text), `the crash printer's ${path.basename(file)}:\n${printer.stderr}`);
      assert.equal(printer.stderr, `${text}\n`);
      // The printer writes what it printed into the event, for later readers.
      const filed = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.equal(filed.text, `${text}\n`);
      assert.equal(filed.delivered, 'stderr');
    }
  });

  test('an out-of-memory alone fails neither reader (a notice, not a memory bug)', async () => {
    const { dir } = reportDir('cuda-out-of-memory');
    const node = await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT });
    const py = await run('python3', ['-m', 'mate_guard', 'report', dir], { cwd: ROOT, env: pythonEnv });
    assert.equal(node.code, 0, node.output);
    assert.equal(py.code, 0, py.output);
    assert.equal(reportText(py.stdout), reportText(node.stdout));
  });

  test("a real run's event as its dying process filed it (native frames unsymbolized): all three symbolize to the same file:line", {
    skip: NO_SYMBOLIZER,
  }, async () => {
    const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-run-'));
    const r = await guardRun(
      ['--native', '*buggy_addon.node', '--report-dir', reports],
      [path.join(ROOT, 'examples', 'scripts', 'native-heap.js'), 'mallocOverflow'],
      { cwd: ROOT },
    );
    assert.notEqual(r.code, 0, r.output);
    const find = (dir) =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((d) =>
          d.isDirectory()
            ? find(path.join(dir, d.name))
            : /^mate-guard-\d+-\d+\.json$/.test(d.name)
              ? [path.join(dir, d.name)]
              : [],
        );
    const [filed] = find(reports);
    const event = JSON.parse(fs.readFileSync(filed, 'utf8'));
    // Back to what the signal handler wrote: module + offset only.
    for (const stack of [event.accessStack, event.allocation.allocFrames]) {
      for (const f of stack.frames)
        for (const k of ['function', 'file', 'line', 'column', 'inlined', 'source']) delete f[k];
    }
    delete event.text;
    delete event.delivered;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-raw-'));
    const file = path.join(dir, 'mate-guard-4242-1.json');
    fs.writeFileSync(file, JSON.stringify(event));
    const node = reportText((await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT })).stdout);
    const py = reportText(
      (await run('python3', ['-m', 'mate_guard', 'report', dir], { cwd: ROOT, env: pythonEnv })).stdout,
    );
    const printer = await run(PRINTER, [file], { cwd: ROOT });
    assert.match(
      node,
      /^==mate-guard== {3}#0 StoreByte examples\/addon\/src\/native_heap\.cc:\d+ \(buggy_addon\.node\+0x[0-9a-f]+\)$/m,
      node,
    );
    assert.equal(py, node, 'Python');
    assert.equal(printer.stderr, `${node}\n`, 'the crash printer');
    // The printer files the frames it symbolized, as Node's printer does.
    const rewritten = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.match(rewritten.accessStack.frames[0].function, /^(\(anonymous namespace\)::)?StoreByte\(/);
    assert.ok(
      ['llvm-symbolizer', 'addr2line'].includes(rewritten.accessStack.frames[0].source),
      rewritten.accessStack.frames[0].source,
    );
  });

  // The event names its writer's runtime and machinery folders, so a reader running another runtime renders it as
  // the writer would: node linked under another name writes it, node and python read it.
  test('an event written by a runtime not named node renders the same through Node, Python and the crash printer: the event names its runtime', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-runtime-'));
    const host = path.join(dir, 'hostrt');
    try {
      fs.linkSync(fs.realpathSync(process.execPath), host);
    } catch {
      fs.copyFileSync(fs.realpathSync(process.execPath), host);
      fs.chmodSync(host, 0o755);
    }
    const reports = path.join(dir, 'reports');
    const r = await run(
      host,
      [
        MATE,
        'guard-run',
        '--native',
        '*buggy_addon.node',
        '--report-dir',
        reports,
        '--',
        host,
        path.join(ROOT, 'examples', 'scripts', 'native-heap.js'),
        'mallocOverflow',
      ],
      { cwd: ROOT },
    );
    assert.notEqual(r.code, 0, r.output);
    const find = (d) =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((x) =>
          x.isDirectory()
            ? find(path.join(d, x.name))
            : /^mate-guard-\d+-\d+\.json$/.test(x.name)
              ? [path.join(d, x.name)]
              : [],
        );
    const [filed] = find(reports);
    const event = JSON.parse(fs.readFileSync(filed, 'utf8'));
    assert.equal(event.runtime, fs.realpathSync(host));
    assert.ok(
      event.machineryDirs.includes(path.join(fs.realpathSync(ROOT), 'packages', 'core-native') + path.sep),
      JSON.stringify(event.machineryDirs),
    );
    // Rendered anew by each reader, not the text its printer filed.
    delete event.text;
    delete event.delivered;
    const raw = path.join(dir, 'raw');
    fs.mkdirSync(raw);
    const file = path.join(raw, 'mate-guard-4242-1.json');
    fs.writeFileSync(file, JSON.stringify(event));
    const node = reportText((await run(process.execPath, [MATE, 'report', raw], { cwd: ROOT })).stdout);
    const py = reportText(
      (await run('python3', ['-m', 'mate_guard', 'report', raw], { cwd: ROOT, env: pythonEnv })).stdout,
    );
    const printer = await run(PRINTER, [file], { cwd: ROOT });
    // hostrt's frames above the addon's are the runtime's, folded by every reader.
    assert.match(node, /^==mate-guard== {3}… \d+ more frames? in the runtime$/m, node);
    assert.equal(py, node, 'Python');
    assert.equal(printer.stderr, `${node}\n`, 'the crash printer');
  });

  test("an event says where its JS machinery is; one written before events did is read as the reader's own (mate report hides mate-guard's frames)", async () => {
    const event = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'overflow.json'), 'utf8'));
    const own = path.join(fs.realpathSync(ROOT), 'packages', 'core-native', 'dist', 'install', 'alloc.js');
    event.allocation.allocStack = `    at guardedAlloc (${own}:10:3)\n    at Object.<anonymous> (${path.join(ROOT, 'examples', 'scripts', 'overflow.js')}:5:20)`;
    const render = async (e) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-origin-'));
      fs.writeFileSync(path.join(dir, 'mate-guard-4242-1.json'), JSON.stringify(e));
      return reportText((await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT })).stdout);
    };
    const old = await render(event);
    assert.doesNotMatch(old, /guardedAlloc/, old);
    assert.match(old, /^==mate-guard== {3}… 1 runner frame$/m, old);
    // A writer that named no machinery (a Python process's event): its word is kept, whoever reads it.
    const shown = await render({ ...event, runtime: null, machineryDirs: [] });
    assert.match(shown, /^==mate-guard== {3}at guardedAlloc \(/m, shown);
  });

  // SARIF's sites, fingerprints and file URIs and the annotations' places are resolved by the native formatter for
  // both readers: a real run's native frames in this repository, and every fixture, byte for byte.
  test('every format (text, sarif, github): python -m mate_guard report prints what mate report prints, with the same exit code', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-formats-'));
    const fixtures = path.join(dir, 'fixtures');
    fs.mkdirSync(fixtures);
    NAMES.forEach((name, i) =>
      fs.copyFileSync(path.join(FIXTURES, `${name}.json`), path.join(fixtures, `mate-guard-${4000 + i}-1.json`)),
    );
    fs.copyFileSync(
      path.join(ROOT, 'test', 'fixtures', 'unreadable-events', 'wrong-type.json'),
      path.join(fixtures, 'mate-guard-4999-1.json'),
    );
    const real = path.join(dir, 'real');
    const r = await guardRun(
      ['--native', '*buggy_addon.node', '--report-dir', real],
      [path.join(ROOT, 'examples', 'scripts', 'native-heap.js'), 'mallocOverflow'],
      { cwd: ROOT },
    );
    assert.notEqual(r.code, 0, r.output);
    for (const format of ['text', 'sarif', 'github']) {
      const node = await run(process.execPath, [MATE, 'report', fixtures, real, '--format', format], { cwd: ROOT });
      const py = await run('python3', ['-m', 'mate_guard', 'report', fixtures, real, '--format', format], {
        cwd: ROOT,
        env: pythonEnv,
      });
      assert.equal(node.code, 1, node.output);
      assert.equal(py.code, 1, `${format}: ${py.output}`);
      const unreadable = (out) => out.split('\n').filter((l) => l.includes('cannot read report file'));
      assert.deepEqual(unreadable(py.stderr), unreadable(node.stderr), `${format}: the unreadable file named alike`);
      if (format === 'sarif') {
        assert.equal(py.stdout, node.stdout, 'the SARIF log, byte for byte');
        const results = JSON.parse(py.stdout).runs[0].results;
        assert.equal(results.length, NAMES.length + 1);
        const heap = results.find(
          (x) => x.locations?.[0].physicalLocation.artifactLocation.uri === 'examples/addon/src/native_heap.cc',
        );
        assert.ok(heap, "the real run's result is at its access site in the repository");
        assert.match(heap.partialFingerprints['mateGuardBug/v1'], /^[0-9a-f]{32}$/);
      } else if (format === 'github') {
        const annotations = (out) => out.split('\n').filter((l) => l.startsWith('::'));
        assert.equal(annotations(py.stdout).length, NAMES.length + 2, py.stdout);
        assert.deepEqual(annotations(py.stdout), annotations(node.stdout));
        assert.ok(
          annotations(py.stdout).some((l) => l.startsWith('::error file=examples/addon/src/native_heap.cc,line=')),
          py.stdout,
        );
      } else {
        assert.equal(reportText(py.stdout), reportText(node.stdout));
      }
    }
  });

  test('python -m mate_guard report refuses a bad --format naming it and the formats (exit 2), as mate report does', async () => {
    const { dir } = reportDir('overflow');
    const py = await run('python3', ['-m', 'mate_guard', 'report', dir, '--format', 'xml'], {
      cwd: ROOT,
      env: pythonEnv,
    });
    assert.equal(py.code, 2, py.output);
    assert.equal(py.stderr, 'mate_guard report: --format "xml" is not a format; known: text, sarif, github\n');
    const node = await run(process.execPath, [MATE, 'report', dir, '--format', 'xml'], { cwd: ROOT });
    assert.equal(node.code, 2, node.output);
    for (const format of ['sarif', 'github']) {
      const oom = reportDir('cuda-out-of-memory');
      const alone = await run('python3', ['-m', 'mate_guard', 'report', oom.dir, `--format=${format}`], {
        cwd: ROOT,
        env: pythonEnv,
      });
      assert.equal(alone.code, 0, `${format}: an out-of-memory alone fails nothing\n${alone.output}`);
    }
  });

  test('an event of the wrong shape is unreadable, named by its file and field, and the good one beside it still reported', async () => {
    const { dir } = reportDir('overflow');
    const bad = path.join(dir, 'mate-guard-4242-2.json');
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'unreadable-events', 'wrong-type.json'), bad);
    const line = `[mate-guard] error: cannot read report file ${bad}: allocation.size is a string, not a number; counted as a violation that could not be read`;
    const node = await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT });
    assert.equal(node.code, 1, node.output);
    assert.ok(node.stderr.split('\n').includes(line), node.stderr);
    assert.match(node.stdout, /^==mate-guard== ERROR: heap-buffer-overflow/m, 'the good event is still reported');
    const py = await run('python3', ['-m', 'mate_guard', 'report', dir], { cwd: ROOT, env: pythonEnv });
    assert.equal(py.code, 1, py.output);
    assert.equal(py.stderr, `${line}\n`);
    assert.equal(reportText(py.stdout), reportText(node.stdout));
    // The crash printer refuses it (the dying process then prints its own headline).
    assert.equal((await run(PRINTER, [bad])).code, 1);
  });

  test('a raw control character inside a JSON string is unreadable in both readers, named by its file, not a crash', async () => {
    const { dir } = reportDir('overflow');
    const bad = path.join(dir, 'mate-guard-4242-2.json');
    fs.writeFileSync(bad, '{"tool":"mate-guard","kind":"heap-buffer-overflow","test":"a\x1bb"}');
    const lead = `[mate-guard] error: cannot read report file ${bad}: not JSON (`;
    const tail = '); counted as a violation that could not be read';
    const node = await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT, timeout: 30_000 });
    const py = await run('python3', ['-m', 'mate_guard', 'report', dir], {
      cwd: ROOT,
      env: pythonEnv,
      timeout: 30_000,
    });
    for (const r of [node, py]) {
      assert.equal(r.code, 1, r.output);
      assert.doesNotMatch(r.stderr, /Traceback/);
      assert.ok(
        r.stderr.split('\n').some((l) => l.startsWith(lead) && l.endsWith(tail) && /control character/i.test(l)),
        r.stderr,
      );
      assert.match(r.stdout, /^==mate-guard== ERROR: heap-buffer-overflow/m, 'the good event is still reported');
    }
  });

  test("nesting past the reader's depth is unreadable, not a crash", async () => {
    const { dir } = reportDir('overflow');
    const deep = path.join(dir, 'mate-guard-4242-3.json');
    fs.writeFileSync(deep, `{"tool":"mate-guard","kind":"double-free","test":${'['.repeat(100)}${']'.repeat(100)}}`);
    const node = await run(process.execPath, [MATE, 'report', dir], { cwd: ROOT });
    assert.equal(node.code, 1, node.output);
    assert.match(node.stderr, /cannot read report file \S+mate-guard-4242-3\.json: nested more than 32 levels deep; /);
    const py = await run('python3', ['-m', 'mate_guard', 'report', deep], { cwd: ROOT, env: pythonEnv });
    assert.equal(py.code, 1, py.output);
    assert.match(py.stderr, /cannot read report file \S+mate-guard-4242-3\.json: nested more than 32 levels deep; /);
  });
});

describe('a report folder from elsewhere (a downloaded artifact): both readers show what it holds, never obey it', {
  skip: noPython(),
}, () => {
  const readers = (dir) =>
    Promise.all([
      run(process.execPath, [MATE, 'report', dir], { cwd: ROOT, timeout: 30_000 }),
      run('python3', ['-m', 'mate_guard', 'report', dir], { cwd: ROOT, env: pythonEnv, timeout: 30_000 }),
    ]);

  test("an event's filed text: printed as filed when it is the printer's; escape sequences forged into it are spelled out, its lines and tabs kept", async () => {
    const { dir, file } = reportDir('overflow');
    const printer = await run(PRINTER, [file], { cwd: ROOT });
    assert.equal(printer.code, 0, printer.output);
    const filed = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const r of await readers(dir)) {
      assert.equal(r.code, 1, r.output);
      assert.ok(r.stdout.startsWith(filed.text), `the filed text, byte for byte:\n${r.stdout}`);
    }
    filed.text = '==mate-guard== \x1b]0;PWNED\x07\x1b[31mRED\x1b[0m \x1b[2J\u009b2J cleared\u202e\n\tindented\n';
    fs.writeFileSync(file, JSON.stringify(filed));
    const [node, py] = await readers(dir);
    for (const r of [node, py]) {
      assert.equal(r.code, 1, r.output);
      assert.doesNotMatch(r.output, /[\x07\x1b\x9b\u202e]/);
      assert.ok(
        r.stdout.startsWith(
          '==mate-guard== \\x1b]0;PWNED\\x07\\x1b[31mRED\\x1b[0m \\x1b[2J\\u009b2J cleared\\u202e\n\tindented\n',
        ),
        r.stdout,
      );
    }
    assert.equal(reportText(py.stdout), reportText(node.stdout));
  });

  test("the crash printer shows an earlier report's filed text the same way: spelled out, its lines kept", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-earlier-'));
    const crash = path.join(dir, 'mate-guard-1067-2.json');
    fs.copyFileSync(path.join(FIXTURES, 'overflow.json'), crash);
    const earlier = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'gap-overflow.json'), 'utf8'));
    Object.assign(earlier, {
      pid: 1067,
      delivered: 'caller',
      text: '==mate-guard== ERROR: canary-corruption\x1b[2J\x1b]0;PWNED\x07\n==mate-guard== \x1b[8mhidden\n',
    });
    fs.writeFileSync(path.join(dir, 'mate-guard-1067-1.json'), JSON.stringify(earlier));
    const printer = await run(PRINTER, [crash, '--with-earlier'], { cwd: ROOT, timeout: 30_000 });
    assert.equal(printer.code, 0, printer.output);
    assert.doesNotMatch(printer.stderr, /[\x07\x1b]/);
    assert.ok(
      printer.stderr.includes(
        '==mate-guard== ERROR: canary-corruption\\x1b[2J\\x1b]0;PWNED\\x07\n==mate-guard== \\x1b[8mhidden\n',
      ),
      printer.stderr,
    );
  });

  const fileLine = (file, why) =>
    `[mate-guard] error: cannot read report file ${file}: ${why}; counted as a violation that could not be read`;
  const LINK = "a symbolic link (a report folder's files are read as plain files, never through a link)";

  test('a FIFO or a link (to /dev/zero, to a FIFO) where a report folder has its files is refused and named; neither reader waits on it', async () => {
    const { dir } = reportDir('overflow');
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-fifo-'));
    execFileSync('mkfifo', [
      path.join(dir, 'mate-guard-4242-2.json'),
      path.join(dir, 'stats-4242-0.json'),
      path.join(elsewhere, 'fifo'),
    ]);
    fs.symlinkSync(path.join(elsewhere, 'fifo'), path.join(dir, 'mate-guard-4242-3.json'));
    fs.symlinkSync('/dev/zero', path.join(dir, 'run.json'));
    const [node, py] = await readers(dir);
    for (const r of [node, py]) {
      assert.equal(r.signal, null, `it waited (killed at 30 s):\n${r.output}`);
      assert.equal(r.code, 1, r.output);
      const lines = r.stderr.split('\n');
      assert.ok(
        lines.includes(fileLine(path.join(dir, 'mate-guard-4242-2.json'), 'a FIFO, not a regular file')),
        r.stderr,
      );
      assert.ok(lines.includes(fileLine(path.join(dir, 'mate-guard-4242-3.json'), LINK)), r.stderr);
      assert.ok(
        lines.includes(
          `[mate-guard] warning: cannot read run file ${path.join(dir, 'run.json')}: ${LINK}; that run is shown without its runner and paths`,
        ),
        r.stderr,
      );
      assert.match(r.stdout, /^==mate-guard== ERROR: heap-buffer-overflow/m, 'the good event is still reported');
    }
    assert.ok(
      node.stderr
        .split('\n')
        .includes(
          `[mate-guard] warning: cannot read counters file ${path.join(dir, 'stats-4242-0.json')}: a FIFO, not a regular file; that process's counts are missing from the summary`,
        ),
      node.stderr,
    );
    assert.match(node.stdout, /3 violations \(2 could not be read\)/);
  });

  test('a run.json that is a FIFO is named, and fails nothing by itself', async () => {
    const { dir } = reportDir('cuda-out-of-memory');
    execFileSync('mkfifo', [path.join(dir, 'run.json')]);
    for (const r of await readers(dir)) {
      assert.equal(r.signal, null, `it waited (killed at 30 s):\n${r.output}`);
      assert.equal(r.code, 0, r.output);
      assert.ok(
        r.stderr
          .split('\n')
          .includes(
            `[mate-guard] warning: cannot read run file ${path.join(dir, 'run.json')}: a FIFO, not a regular file; that run is shown without its runner and paths`,
          ),
        r.stderr,
      );
    }
  });

  test("an event's native frame naming a FIFO as its module: printed as module+offset, the symbolizers never wait on it", async () => {
    const { dir, file } = reportDir('native-heap-overflow');
    const fifo = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-parity-fifo-')), 'module.so');
    execFileSync('mkfifo', [fifo]);
    const event = JSON.parse(fs.readFileSync(file, 'utf8'));
    delete event.text;
    for (const stack of [event.accessStack, event.allocation.allocFrames])
      for (const f of stack.frames)
        for (const k of ['function', 'file', 'line', 'column', 'inlined', 'source']) delete f[k];
    event.accessStack.frames[0].module = fifo;
    fs.writeFileSync(file, JSON.stringify(event));
    for (const r of await readers(dir)) {
      assert.equal(r.signal, null, `it waited (killed at 30 s):\n${r.output}`);
      assert.equal(r.code, 1, r.output);
      assert.match(r.stdout, /^==mate-guard== ERROR: heap-buffer-overflow/m);
      assert.match(r.stdout, /^==mate-guard== {3}#0 \(module\.so\+0x10b13\)$/m);
    }
    const printer = await run(PRINTER, [file], { cwd: ROOT, timeout: 30_000 });
    assert.equal(printer.signal, null, printer.output);
    assert.equal(printer.code, 0, printer.output);
    assert.match(printer.stderr, /^==mate-guard== {3}#0 \(module\.so\+0x10b13\)$/m);
  });
});
