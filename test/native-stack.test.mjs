// The native access stack: a fault's frames captured inside the signal
// handler (unwind tables through the signal frame), resolved to module +
// offset by the module map, symbolized by the report printer. Real faults
// in the example addon on every kind of thread, asserted on the printed
// report's access block and on the event file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { buildSharedObject, cCompiler, findOnPath } from './helpers/compile.mjs';
import { ADDON, buggyLine } from './helpers/native-frames.mjs';
import { ROOT, run } from './helpers/run.mjs';

const require = createRequire(import.meta.url);
const { loadNative } = require('../packages/core-native/dist/install/native.js');
const { afterAddonLoads } = require('../packages/core-native/dist/install/addon-loads.js');
const { symbolizeFramesSync } = require('../packages/core-native/dist/symbolize/index.js');

/** The function the module's own ELF symbols name at `offset` (no tool asked), or undefined. */
function elfName(module, offset) {
  const [f] = symbolizeFramesSync([{ module, offset }], {
    tools: { llvmSymbolizer: false, addr2line: false },
    cache: false,
  });
  return f.source === 'elf-symbols' ? f.function : undefined;
}

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'native-stack', 'fault.js');

/** Runs the fixture to its fault: the printed report's access lines and the event file's frames. */
async function faultIn(where, extra = [], env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-native-stack-'));
  try {
    const r = await run(process.execPath, ['--expose-gc', FIXTURE, where, ...extra], {
      env: { MATE_GUARD_REPORT_DIR: dir, ...env },
    });
    assert.equal(r.signal, 'SIGSEGV', r.output);
    assert.doesNotMatch(r.output, /not reached/);
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/);
    const [file] = fs.readdirSync(dir).filter((f) => /^mate-guard-\d+-\d+\.json$/.test(f));
    const event = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    assert.equal(
      event.text,
      r.stderr.slice(r.stderr.indexOf('==mate-guard== ERROR')),
      'the printer filed what it printed',
    );
    const lines = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('==mate-guard==   #'))
      .map((l) => l.slice('==mate-guard==   '.length));
    assert.ok(r.stderr.includes('==mate-guard== access:\n'), r.stderr);
    return { event, frames: event.accessStack.frames, unwind: event.accessStack.unwind, lines };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function assertAccessSite({ frames, unwind, lines }, fn, line) {
  assert.equal(unwind, 'unwind-tables');
  assert.equal(frames[0].module, ADDON, 'frame #0 is in the addon');
  assert.equal(frames[0].returnAddress, false, 'frame #0 is the faulting pc itself');
  assert.ok(
    frames.slice(1).every((f) => f.returnAddress),
    'callers are return addresses',
  );
  assert.match(
    lines[0],
    new RegExp(`^#0 ${fn} examples/addon/src/buggy\\.cc:${line} \\(buggy_addon\\.node\\+0x[0-9a-f]+\\)$`),
    lines.join('\n'),
  );
  return lines;
}

test('a fault on the main thread: #0 is the addon function and the buggy line, then its callers', async () => {
  const fault = await faultIn('main');
  const lines = assertAccessSite(fault, 'FillInclusive', buggyLine('POKE(p + i, 0x41)'));
  assert.ok(fault.frames.length >= 3, lines.join('\n'));
  assert.match(
    lines.join('\n'),
    /^#1 .*napi-inl\.h:\d+ \(buggy_addon\.node\+0x/m,
    'the node-addon-api wrapper that called it',
  );
  assert.ok(
    fault.frames.some((f) => f.module === process.execPath || path.basename(f.module ?? '') === 'node'),
    'unwinds into node itself',
  );
  assert.match(
    fault.frames[0].function,
    /FillInclusive\(Napi::CallbackInfo const&\)$/,
    'the event keeps the symbolized frames',
  );
});

test('a fault on a libuv pool thread names the async work callback', async () => {
  // GCC devirtualizes and inlines Execute into node-addon-api's callback and
  // records the inlined copy by its short name.
  assertAccessSite(await faultIn('pool'), '(?:OverflowWorker::)?Execute', buggyLine('POKE(p_ + i, 0x45)'));
});

test('a fault inside a worker_thread names its frame', async () => {
  assertAccessSite(await faultIn('worker'), 'FillInclusive', buggyLine('POKE(p + i, 0x41)'));
});

test('a fault in a Node-API finalizer names the finalizer', async () => {
  assertAccessSite(await faultIn('finalizer'), 'FinalizeKept', buggyLine('POKE(kept->p + i, 0x46)'));
});

test('with no symbolizer on PATH the printed report still names the function, from the ELF symbols', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-nopath-'));
  try {
    const { lines } = await faultIn('main', [], { PATH: empty });
    assert.match(lines[0], /^#0 FillInclusive \(buggy_addon\.node\+0x[0-9a-f]+\)$/, lines.join('\n'));
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

const OBJCOPY = findOnPath('objcopy', process.env.PATH);

test('a stripped addon gives module+offset in the printed report', {
  skip: !OBJCOPY && 'objcopy is not on PATH',
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-stripped-'));
  try {
    const copy = path.join(dir, 'stripped_addon.node');
    execFileSync(OBJCOPY, ['--strip-all', ADDON, copy]);
    const { lines } = await faultIn('copy', [copy]);
    assert.match(lines[0], /^#0 \(stripped_addon\.node\+0x[0-9a-f]+\)$/, lines.join('\n'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const CC = cCompiler();

test('code without unwind tables is walked by its frame pointers, a frameless leaf included', {
  skip: !CC && 'no C compiler on PATH',
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-nounwind-'));
  try {
    const addon = buildSharedObject(
      CC,
      path.join(dir, 'no_unwind_tables.node'),
      [path.join(ROOT, 'test', 'fixtures', 'native-stack', 'no-unwind-tables.c')],
      { flags: ['-O2', '-fno-omit-frame-pointer', '-fno-asynchronous-unwind-tables', '-fno-unwind-tables'] },
    );
    const { unwind, lines } = await faultIn('no-unwind-tables', [addon]);
    assert.equal(unwind, 'frame-pointers');
    // No debug info: names only (llvm-symbolizer adds the file a static function came from).
    assert.match(
      lines[0],
      /^#0 poke_past_end (?:no-unwind-tables\.c )?\(no_unwind_tables\.node\+0x[0-9a-f]+\)$/,
      lines.join('\n'),
    );
    assert.match(lines[1], /^#1 fill_through_helper /, lines.join('\n'));
    assert.match(lines[2], /^#2 Fill /, lines.join('\n'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the module map resolves code addresses to module + link-time address, as the ELF symbols give them', () => {
  const native = loadNative();
  native.refreshModuleMap();
  const t = native.nativeStackTesting;
  // The main program (node, not PIE here: load bias 0) and a shared object.
  const inNode = t.addressOf('', 'napi_create_buffer');
  assert.ok(inNode, 'node exports napi_create_buffer');
  assert.equal(inNode.module, fs.realpathSync(process.execPath));
  assert.equal(elfName(inNode.module, inNode.offset), 'napi_create_buffer');
  require(ADDON);
  native.refreshModuleMap();
  const inAddon = t.addressOf(ADDON, 'napi_register_module_v1');
  assert.equal(inAddon.module, ADDON);
  assert.equal(elfName(ADDON, inAddon.offset), 'napi_register_module_v1');
  assert.notEqual(
    elfName(ADDON, inAddon.offset - 1),
    'napi_register_module_v1',
    'offset is the symbol value itself (pc - load bias)',
  );
  assert.ok(Number.parseInt(inAddon.pc, 16) > inAddon.offset, 'a shared object is loaded at a bias');
  // A capture outside any handler starts at the binding function itself.
  const here = t.captureHere();
  assert.equal(path.basename(here[0].module), 'mate_guard.node');
  assert.ok(here.every((f) => f.returnAddress));
});

test('the module map learns of an addon loaded later, through the dlopen hook or a cheap refresh', () => {
  const native = loadNative();
  const t = native.nativeStackTesting;
  native.refreshModuleMap();
  assert.equal(native.refreshModuleMap(), false, 'nothing loaded since: no rebuild');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-modmap-'));
  try {
    const undo = afterAddonLoads(() => native.refreshModuleMap());
    const copy = path.join(dir, 'copy_addon.node');
    fs.copyFileSync(ADDON, copy);
    require(copy); // a new object: the hook rebuilds the map after process.dlopen
    undo();
    assert.ok(t.moduleTable().includes(fs.realpathSync(copy)), t.moduleTable().join('\n'));
    assert.equal(t.addressOf(copy, 'napi_register_module_v1')?.module, fs.realpathSync(copy));
    assert.equal(native.refreshModuleMap(), false);
    assert.equal(native.refreshModuleMap(true), true, 'force rebuilds');
    // Loaded behind the map's back (no hook, no refresh): glibc's lock-free
    // _dl_find_object still names the module, without a table index.
    const unseen = path.join(dir, 'unseen_addon.node');
    fs.copyFileSync(ADDON, unseen);
    require(unseen);
    const f = t.addressOf(unseen, 'napi_register_module_v1');
    assert.equal(f?.module, fs.realpathSync(unseen));
    assert.equal(f.moduleIndex, null);
    assert.equal(f.offset, t.addressOf(ADDON, 'napi_register_module_v1').offset);
    assert.equal(native.refreshModuleMap(), true, 'the cheap check sees the new object');
    assert.equal(typeof t.addressOf(unseen, 'napi_register_module_v1').moduleIndex, 'number');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
