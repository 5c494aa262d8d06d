// README's sample reports are real output: each is compared with a fresh
// run of the command the demo runs (paths shortened to the repository,
// addresses and module offsets left out: they change with every run and
// build). Before, README cited buggy.cc:36 and :44 while the demo printed
// 38 and 46. A failure prints the block to paste.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const require = createRequire(import.meta.url);
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const MATE_VITEST = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const cleanup = [];
after(() => cleanup.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** The lines of the fenced block between `<!-- sample:NAME:start ... -->` and `<!-- sample:NAME:end -->`. */
function sample(name) {
  const m = new RegExp(
    `<!-- sample:${name}:start[^>]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\`\\n<!-- sample:${name}:end -->`,
  ).exec(README);
  assert.ok(m, `README has the sample:${name} markers around a fenced block`);
  return m[1].trimEnd().split('\n');
}

/**
 * What stays the same from run to run: no checkout path, no addresses or
 * module offsets, no allocation numbers (how many allocations the runner
 * and the addon's start-up made before differs between machines).
 */
const shorten = (line) => line.split(`${ROOT}/`).join('');
const stable = (line) =>
  shorten(line)
    .replace(/0x[0-9a-f]+/g, '0x…')
    .replace(/allocation #\d+/g, 'allocation #…');

/** The report that starts at the first line containing `first`: that line and the `==mate-guard==` lines right after it. */
function block(output, first) {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.includes(first));
  assert.ok(start >= 0, `no line containing ${JSON.stringify(first)} in:\n${output}`);
  let end = start + 1;
  while (end < lines.length && lines[end].startsWith('==mate-guard==') && !lines[end].includes(' ERROR: ')) end++;
  return lines.slice(start, end);
}

/** README's lines equal the real ones (a `...` line in README stands for the rest). */
function assertSame(name, readme, real) {
  const shown = readme.indexOf('...') >= 0 ? readme.slice(0, readme.indexOf('...')) : readme;
  const paste = real
    .slice(0, readme.indexOf('...') >= 0 ? shown.length : undefined)
    .map(shorten)
    .join('\n');
  assert.deepEqual(
    shown.map(stable),
    real.slice(0, shown.length).map(stable),
    `README's sample:${name} is not what the run prints; paste:\n${paste}`,
  );
  if (shown.length === readme.length)
    assert.equal(real.length, readme.length, `README's sample:${name} is not the whole report; paste:\n${paste}`);
}

// The demo's Vitest step (examples/demo/20-vitest.mjs), on the overflow file.
const vitestOverflow = run(process.execPath, [MATE_VITEST, 'run', 'overflow', '--guard-alloc'], {
  cwd: path.join(ROOT, 'examples', 'vitest'),
});

test('the report at the top (and the one README reads line by line) is a real Vitest run of examples/', async () => {
  const r = await vitestOverflow;
  assert.notEqual(r.code, 0, r.output);
  const real = block(r.output, '==mate-guard== ERROR: heap-buffer-overflow');
  assertSame('vitest-overflow', sample('vitest-overflow'), real);
  assert.match(shorten(real.join('\n')), /#0 FillInclusive examples\/addon\/src\/buggy\.cc:\d+ /);

  // "Reading a report" cites the access line of that report.
  const cited = /\| `access:` then `(#0 [^`]+)`/.exec(README);
  assert.ok(cited, 'README reads the access line');
  assert.equal(
    stable(`==mate-guard==   ${cited[1]}`),
    stable(real.find((l) => l.includes(' #0 '))),
    "the access line README reads is the sample's",
  );
});

test("the JSON sample has the event's source line, column and allocation site", async () => {
  const r = await vitestOverflow;
  const dir = /^\[mate-guard\] reports: (.+)$/m.exec(r.output)?.[1];
  assert.ok(dir, `the run names its report directory:\n${r.output}`);
  cleanup.push(dir);
  const file = fs.readdirSync(dir).find((f) => /^mate-guard-\d+-\d+\.json$/.test(f)); // beside run.json and replay.json
  assert.ok(file, `a JSON report in ${dir}`);
  const event = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const json = sample('json').join('\n');
  const frame = event.accessStack.frames[0];
  const abs = (p) => p.replace(`${ROOT}/`, '/abs/');
  assert.ok(
    json.includes(`"file": ${JSON.stringify(abs(frame.file))}, "line": ${frame.line}, "column": ${frame.column} }`),
    `README's JSON sample names ${abs(frame.file)}:${frame.line}:${frame.column}`,
  );
  assert.ok(json.includes(`"function": ${JSON.stringify(frame.function)}`), frame.function);
  assert.ok(
    json.includes(`"allocStack": ${JSON.stringify(abs(event.allocation.allocStack.split('\n')[0]) + '\n    at …')}`),
    event.allocation.allocStack,
  );
  assert.ok(json.includes(`"test": ${JSON.stringify(event.test)}`), event.test);
});

test("the canary rerun sample is mate guard-run on examples/scripts/underflow.js (the demo's step)", async () => {
  const r = await run(process.execPath, [MATE, 'guard-run', '--', process.execPath, 'examples/scripts/underflow.js']);
  assert.equal(r.code, 1, r.output);
  const lines = r.output.split('\n');
  const start = lines.findIndex((l) => l.startsWith('[mate-guard] rerunning the command'));
  assert.ok(start >= 0, r.output);
  assertSame('canary-rerun', sample('canary-rerun'), lines.slice(start));
});

test('the death sample is mate guard-run on a free that bypasses the router (test/fixtures/core/die.js)', async () => {
  const r = await run(process.execPath, [
    MATE,
    'guard-run',
    '--native',
    '*buggy_addon.node',
    '--',
    process.execPath,
    'test/fixtures/core/die.js',
    'freeBypassingRouter',
  ]);
  assert.equal(r.code, 134, r.output);
  assertSame('death-free-bypass', sample('death-free-bypass'), block(r.output, '==mate-guard== ERROR: deadly-signal'));
});

// The CUDA sample comes from a GPU: where there is none, its launch sites are
// still checked against the script (each names the line and column of the
// call that launched that kernel).
const CUDA = path.join(ROOT, 'examples', 'cuda');

test("the CUDA sample's launch sites are the calls in examples/cuda/scripts/overrun.js", () => {
  const source = fs.readFileSync(path.join(CUDA, 'scripts', 'overrun.js'), 'utf8').split('\n');
  const lines = sample('cuda-overrun');
  let checked = 0;
  lines.forEach((line, i) => {
    const site = /launched at Object\.<anonymous> \(examples\/cuda\/scripts\/overrun\.js:(\d+):(\d+)\)$/.exec(line);
    if (!site) return;
    const kernel = /^==mate-guard== {3}(\w+) \(launch \d+/.exec(lines[i - 1])?.[1];
    assert.ok(kernel, `a kernel line before ${line}`);
    const call = `${kernel[0].toLowerCase()}${kernel.slice(1)}(`;
    assert.ok(
      source[+site[1] - 1].slice(+site[2] - 1).startsWith(call),
      `overrun.js:${site[1]}:${site[2]} is the ${call}...) call`,
    );
    checked++;
  });
  assert.ok(checked >= 2, 'the sample names launch sites');
});

test('the CUDA sample is a real run of examples/cuda/scripts/overrun.js', {
  skip: require(path.join(CUDA, 'gpu.js')),
}, async () => {
  const r = await run(process.execPath, [
    MATE,
    'guard-run',
    '--device',
    'cuda',
    '--',
    process.execPath,
    'examples/cuda/scripts/overrun.js',
  ]);
  assert.notEqual(r.code, 0, r.output);
  const readme = sample('cuda-overrun');
  const real = block(r.output, '==mate-guard== ERROR: illegal-address');
  const shown = readme.slice(0, readme.indexOf('...'));
  assertSame('cuda-overrun', shown.concat('...'), real);
  // The line after `...` is the hint, shortened in README.
  const hint = readme.at(-1).replace(/\.\.\.$/, '');
  assert.ok(
    real.some((l) => l.startsWith(hint)),
    `the hint starts ${hint}`,
  );
});

// CI formats (mate report --format sarif / github) of that same overflow,
// run again with a report directory to merge.
let ciRunDir;
const ciRun = () =>
  (ciRunDir ??= (async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-readme-ci-'));
    cleanup.push(parent);
    const r = await run(
      process.execPath,
      [MATE_VITEST, 'run', 'overflow', '--guard-alloc', '--guard-report-dir', parent],
      { cwd: path.join(ROOT, 'examples', 'vitest') },
    );
    assert.notEqual(r.code, 0, r.output);
    return parent;
  })());

/** Addresses (in strings too) left out: they change with every run. */
const stableJson = (v) => JSON.parse(JSON.stringify(v).replace(/0x[0-9a-f]+/g, '0x…'));

test('the SARIF sample is a real result of mate report --format sarif on that run (message cut to its first line, stacks left out)', async () => {
  const r = await run(process.execPath, [MATE, 'report', await ciRun(), '--format', 'sarif']);
  assert.equal(r.code, 1, r.output);
  const result = JSON.parse(r.stdout).runs[0].results[0];
  delete result.stacks;
  result.message.text = result.message.text.split('\n')[0];
  const why = `README's sample:sarif-result is not what mate report prints; paste:\n${JSON.stringify(result, null, 2)}`;
  let shown;
  try {
    shown = JSON.parse(sample('sarif-result').join('\n'));
  } catch {
    assert.fail(why);
  }
  assert.deepEqual(stableJson(shown), stableJson(result), why);
});

test('the annotation sample is the start of mate report --format github on that run', async () => {
  const r = await run(process.execPath, [MATE, 'report', await ciRun(), '--format', 'github']);
  assert.equal(r.code, 1, r.output);
  const real = shorten(r.stdout.split('\n').find((l) => l.startsWith('::error ')) ?? '');
  const why = `README's sample:github-annotation is not what mate report prints; paste:\n${real.slice(0, real.indexOf('%0Aaccess:%0A'))}…`;
  const [shown] = sample('github-annotation');
  assert.ok(shown.endsWith('…'), why);
  const cut = shown.slice(0, -1);
  assert.equal(stable(real).slice(0, stable(cut).length), stable(cut), why);
});
