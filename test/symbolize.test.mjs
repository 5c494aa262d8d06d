// Symbolizing a real fault's native frames in every situation a user's
// machine may be in: llvm-symbolizer on PATH, only addr2line, neither (the
// module's own ELF symbols), a stripped module, a hung tool. The symbolizer
// is the native core's one (report/symbolizer.h), reached from Node through
// the addon, as the crash printer and Python reach it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { findOnPath } from './helpers/compile.mjs';
import { ADDON, buggyLine } from './helpers/native-frames.mjs';
import { ROOT, run } from './helpers/run.mjs';

const require = createRequire(import.meta.url);
const SYMBOLIZE = path.join(ROOT, 'packages', 'core-native', 'dist', 'symbolize', 'index.js');
const { symbolizeFramesSync, clearSymbolCache } = require(SYMBOLIZE);
// The report's frame lines are the native formatter's (src/native/report/format/).
const { formatReport } = require(path.join(ROOT, 'packages', 'core-native', 'dist', 'report', 'format.js'));
const LLVM = findOnPath('llvm-symbolizer', process.env.PATH);
const ADDR2LINE = findOnPath('addr2line', process.env.PATH);
const STRIP = findOnPath('objcopy', process.env.PATH) ?? findOnPath('strip', process.env.PATH);
const FILL_LINE = buggyLine('POKE(p + i, 0x41)');

let frames; // a real fault's frames in FillInclusive, as the handler captures them
let event; // that fault's event, whose access frames fmt() replaces
let tmp;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-symbolize-'));
  const r = await run(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'native-stack', 'fault.js'), 'main'], {
    env: { MATE_GUARD_REPORT_DIR: tmp },
  });
  const [file] = fs.readdirSync(tmp).filter((f) => f.endsWith('.json'));
  // The frames as the handler wrote them, before the printer symbolized them.
  event = JSON.parse(fs.readFileSync(path.join(tmp, file), 'utf8'));
  frames = event.accessStack.frames.map(({ pc, module, offset, returnAddress }) => ({
    pc,
    module,
    offset,
    returnAddress,
  }));
  fs.rmSync(path.join(tmp, file));
  assert.equal(frames[0]?.module, ADDON, r.output);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const first = (lines) => lines[0];
/** The access block's frame lines of the fault's report, its frames replaced by `symbolized` (fold lines left out). */
const fmt = (symbolized) =>
  formatReport({ ...event, accessStack: { ...event.accessStack, frames: symbolized } })
    .split('\n')
    .filter((l) => /^==mate-guard== {3}#/.test(l))
    .map((l) => l.replace(/^==mate-guard== {3}/, ''));

/** Symbolizes `frames` in a fresh node whose PATH is `dir` alone. */
async function symbolizeWithPath(dir, input) {
  const script = `const s = require(${JSON.stringify(SYMBOLIZE)});
    const frames = JSON.parse(process.argv[1]);
    console.log(JSON.stringify({ sync: s.symbolizeFramesSync(frames) }));`;
  const r = await run(process.execPath, ['-e', script, JSON.stringify(input)], { env: { PATH: dir } });
  assert.equal(r.code, 0, r.output);
  return JSON.parse(r.stdout);
}

test('with llvm-symbolizer on PATH: function, file:line and inlined callers of every frame', {
  skip: !LLVM && 'llvm-symbolizer is not on PATH',
}, () => {
  clearSymbolCache();
  const s = symbolizeFramesSync(frames);
  assert.equal(s[0].source, 'llvm-symbolizer');
  assert.equal(s[0].line, FILL_LINE);
  const lines = fmt(s);
  assert.match(
    first(lines),
    new RegExp(
      `^#0 FillInclusive examples/addon/src/buggy\\.cc:${FILL_LINE} \\(buggy_addon\\.node\\+0x${frames[0].offset.toString(16)}\\)$`,
    ),
  );
  assert.ok(
    lines.some((l) => /^#1\.1 /.test(l)),
    `node-addon-api's inlined wrappers: ${lines.join('\n')}`,
  );
});

test('with only addr2line: the same function and line', { skip: !ADDR2LINE && 'addr2line is not on PATH' }, () => {
  clearSymbolCache();
  const s = symbolizeFramesSync(frames, { tools: { llvmSymbolizer: false } });
  assert.equal(s[0].source, 'addr2line');
  assert.match(first(fmt(s)), new RegExp(`^#0 FillInclusive examples/addon/src/buggy\\.cc:${FILL_LINE} `));
});

test("with neither tool on PATH the ELF symbols still name the function (no line), and node's frames too", async () => {
  const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
  const r = await symbolizeWithPath(empty, frames);
  assert.equal(r.sync[0].source, 'elf-symbols');
  assert.equal(r.sync[0].file, undefined);
  assert.equal(first(fmt(r.sync)), `#0 FillInclusive (buggy_addon.node+0x${frames[0].offset.toString(16)})`);
  const nodeFrames = r.sync.filter((f) => path.basename(f.module ?? '') === 'node');
  assert.ok(nodeFrames.length && nodeFrames.every((f) => f.function), fmt(r.sync).join('\n'));
});

test('with no tool on PATH the ELF names come out fully demangled (no c++filt needed)', async () => {
  const r = await symbolizeWithPath(fs.mkdtempSync(path.join(tmp, 'empty-')), frames.slice(0, 1));
  assert.equal(r.sync[0].function, '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)');
});

test('a stripped copy of the module gives module+offset, whatever is on PATH', {
  skip: !STRIP && 'neither objcopy nor strip is on PATH',
}, async () => {
  const copy = path.join(tmp, 'stripped_addon.node');
  if (path.basename(STRIP) === 'objcopy') execFileSync(STRIP, ['--strip-all', ADDON, copy]);
  else execFileSync(STRIP, ['--strip-all', '-o', copy, ADDON]);
  const input = [{ ...frames[0], module: copy }];
  const expected = `#0 (stripped_addon.node+0x${frames[0].offset.toString(16)})`;
  clearSymbolCache();
  if (LLVM) assert.equal(first(fmt(symbolizeFramesSync(input))), expected, 'llvm-symbolizer');
  clearSymbolCache();
  if (ADDR2LINE)
    assert.equal(first(fmt(symbolizeFramesSync(input, { tools: { llvmSymbolizer: false } }))), expected, 'addr2line');
  const r = await symbolizeWithPath(fs.mkdtempSync(path.join(tmp, 'empty-')), input);
  assert.equal(first(fmt(r.sync)), expected, 'ELF symbols');
  assert.equal(r.sync[0].source, 'none');
});

test('a missing module and an address outside any module give what is known', () => {
  const s = symbolizeFramesSync([
    { module: path.join(tmp, 'gone.so'), offset: 0x1a2b, returnAddress: true },
    { module: null, offset: 0x7f0011223344, pc: '0x7f0011223344', returnAddress: true },
  ]);
  assert.deepEqual(fmt(s), ['#0 (gone.so+0x1a2b)', '#1 (0x7f0011223344, no module)']);
});

test('an llvm-symbolizer that cannot run (too old, broken) leaves the frames to addr2line', {
  skip: !ADDR2LINE && 'addr2line is not on PATH',
}, () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'broken-'));
  fs.writeFileSync(path.join(dir, 'llvm-symbolizer'), '#!/bin/sh\necho "Unknown command line argument" >&2\nexit 1\n', {
    mode: 0o755,
  });
  fs.symlinkSync(ADDR2LINE, path.join(dir, 'addr2line'));
  clearSymbolCache();
  const s = symbolizeFramesSync(frames, { path: dir });
  assert.equal(s[0].source, 'addr2line');
  assert.equal(s[0].line, FILL_LINE);
});

test('a hung symbolizer cannot hold the report past the time bound; the ELF names remain', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'hung-'));
  const hung = path.join(dir, 'llvm-symbolizer');
  fs.writeFileSync(hung, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
  clearSymbolCache();
  const t = Date.now();
  const s = symbolizeFramesSync(frames, { path: dir, timeoutMs: 1500 });
  const ms = Date.now() - t;
  assert.ok(ms < 4000, `took ${ms} ms`);
  assert.equal(s[0].source, 'elf-symbols');
  assert.match(s[0].function, /FillInclusive/);
});

test('results are cached per module and address until cleared', {
  skip: !LLVM && 'llvm-symbolizer is not on PATH',
}, () => {
  clearSymbolCache();
  const once = symbolizeFramesSync(frames);
  const again = symbolizeFramesSync(frames, {
    tools: { llvmSymbolizer: path.join(tmp, 'no-such-tool'), addr2line: false },
  });
  assert.deepEqual(again, once);
  clearSymbolCache();
  const uncached = symbolizeFramesSync(frames, {
    tools: { llvmSymbolizer: path.join(tmp, 'no-such-tool'), addr2line: false },
  });
  assert.equal(uncached[0].source, 'elf-symbols');
});
