// The install contract, config errors, the CLI's errors, logging, stats,
// the JS buffer forms, capacity and the mprotect fallback.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { guardRun, MATE, run, ROOT } from './helpers/run.mjs';

const fixture = (name) => path.join(ROOT, 'test', 'fixtures', 'core', name);
const core = path.join(ROOT, 'packages', 'core-native');
const node = (code, args = [], opts) => run(process.execPath, [...args, '-e', code], opts);

test('installing again with the same config is a no-op; a different config throws', async () => {
  const r = await node(`
    const c = require(${JSON.stringify(core)});
    c.installGuardAllocator({ mode: 'tail' });
    c.installGuardAllocator({ mode: 'tail' });
    console.log('active', c.isGuardAllocatorActive());
    try { c.installGuardAllocator({ mode: 'head' }); } catch (e) { console.log('threw:', e.message); }
  `);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /active true/);
  assert.match(r.output, /threw: Guard allocator is already active with a different configuration/);
});

test('a clean guarded process loads no report formatter, symbolizer or suppression matcher; the first violation does', async () => {
  // Less allocated at startup: the program's garbage is not collected much sooner than unguarded.
  const r = await node(`
    const c = require(${JSON.stringify(core)});
    c.installGuardAllocator({});
    Buffer.from('clean');
    const loaded = () => Object.keys(require.cache).filter((f) => /dist[\\/](report[\\/](render|format|suppressions)|symbolize[\\/]index)\\.js$/.test(f)).length;
    console.log('clean', loaded());
    const b = Buffer.alloc(8);
    require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))}).writeAt(b, -1, 1);
    const v = c.checkCanaries();
    console.log('violations', v.length, 'then', loaded(), /ERROR: canary-corruption/.test(v[0]?.text ?? ''));
  `);
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /^clean 0$/m);
  assert.match(r.stdout, /^violations 1 then 4 true$/m);
});

test('buffers of more than half a page come zeroed from the ready pool, and damage to their slack is found in either mode', async () => {
  for (const mode of ['tail', 'head']) {
    const r = await node(`
      const c = require(${JSON.stringify(core)});
      c.installGuardAllocator({ mode: '${mode}' });
      const addon = require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))});
      let nonzero = 0;
      // Enough of them that the background thread has made such slots ready ahead.
      for (let i = 0; i < 2000; i++) {
        const b = i % 2 ? Buffer.alloc(3000) : Buffer.allocUnsafe(2049 + (i % 2047));
        if (b.some((x) => x !== 0)) nonzero++;
        b.fill(0xee);
      }
      const b = Buffer.alloc(3000);
      addon.writeAt(b, ${mode === 'tail' ? -2 : 3001}, 7);
      const v = c.checkCanaries();
      console.log('nonzero', nonzero, 'violations', v.length, v[0]?.text.split('\\n')[0]);
    `);
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.stdout,
      new RegExp(
        `^nonzero 0 violations 1 ==mate-guard== ERROR: canary-corruption: 2 bytes ${mode === 'tail' ? 'before the start' : 'past the end'} of allocation #\\d+ \\(3000 bytes, ${mode} mode\\) damaged`,
        'm',
      ),
    );
  }
});

for (const [config, message] of [
  [{ mode: 'sideways' }, 'mode: "sideways" is not a guard mode; use tail or head'],
  [{ alignment: 3 }, 'alignment: 3 is not allowed; use a power of two from 1 to 4096'],
  [{ alignment: 8192 }, 'alignment: 8192 is not allowed; use an integer from 1 to 4096'],
  [{ logAllocations: 'maybe' }, 'logAllocations: "maybe" is not a boolean; use 1/true/yes/on or 0/false/no/off'],
  [{ quarantineMaxCount: -1 }, 'quarantineMaxCount: -1 is not allowed; use an integer from 0 to 2147483648'],
  [{ colour: 'red' }, 'installGuardAllocator: unknown option "colour"'],
]) {
  test(`bad config ${JSON.stringify(config)} throws a clear error`, async () => {
    const r = await node(`
      const c = require(${JSON.stringify(core)});
      try { c.installGuardAllocator(${JSON.stringify(config)}); console.log('no error'); }
      catch (e) { console.log(e.name + ': ' + e.message); console.log('active', c.isGuardAllocatorActive()); }
    `);
    assert.ok(r.output.includes(`GuardConfigError: ${message}`), r.output);
    assert.match(r.output, /active false/);
  });
}

for (const [args, message] of [
  [
    ['guard-run', '--mode', 'sideways', '--', 'node', '-v'],
    'mate: --mode: "sideways" is not a guard mode; use tail or head',
  ],
  [
    ['guard-run', '--alignment', '6', '--', 'node', '-v'],
    'mate: --alignment: "6" is not allowed; use a power of two from 1 to 4096',
  ],
  [['guard-run', '--frobnicate', '--', 'node', '-v'], 'mate: unknown option "--frobnicate"'],
  [['guard-run', 'node', '-v'], 'mate: unexpected "node": put the command after --'],
  [['guard-run', '--mode', 'tail'], 'mate: no command given'],
  [['guard-run'], 'mate: no command given'],
  [['frobnicate'], 'mate: unknown command "frobnicate"; known: guard-run, report, replay, options, build-native'],
  // A negative number is the flag's value (named as not allowed), not a missing one.
  [
    ['guard-run', '--native-sample-rate', '-1', '--', 'node', '-v'],
    'mate: --native-sample-rate: "-1" is not allowed; use an integer from 1 to 2147483648',
  ],
  [
    ['guard-run', '--native-sample-rate', '--', 'node', '-v'],
    'mate: --native-sample-rate needs a value: an integer from 1 to 2147483648 (e.g. --native-sample-rate=1)',
  ],
  [['report', MATE], `mate: ${MATE} is not a directory: mate report reads report directories`],
  [['report', path.join(ROOT, 'no-such-folder')], `mate: ${path.join(ROOT, 'no-such-folder')}: no such directory`],
]) {
  test(`mate ${args.join(' ')} exits 2 with a clear error`, async () => {
    const r = await run(process.execPath, [MATE, ...args]);
    assert.equal(r.code, 2, r.output);
    assert.ok(r.stderr.includes(message), r.stderr);
  });
}

test('mate --version and -v print the version of @mate-guard/core, exit 0', async () => {
  const { version } = JSON.parse(fs.readFileSync(path.join(core, 'package.json'), 'utf8'));
  for (const flag of ['--version', '-v']) {
    const r = await run(process.execPath, [MATE, flag]);
    assert.equal(r.code, 0, r.output);
    assert.equal(r.output, `${version}\n`);
  }
});

test('mate options --runner vitest where only another runner package is installed: not installed here, not "not a runner"', async () => {
  // Before: 'mate: --runner: "vitest" is not a runner; use node-test', in a project that just lacks @mate-guard/vitest.
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-one-runner-'));
  try {
    const scope = path.join(project, 'node_modules', '@mate-guard');
    for (const part of ['dist', 'bin', 'package.json'])
      fs.cpSync(path.join(core, part), path.join(scope, 'core', part), { recursive: true });
    const nodeTest = path.join(ROOT, 'packages', 'node-test');
    for (const part of ['dist', 'bin', 'package.json'])
      fs.cpSync(path.join(nodeTest, part), path.join(scope, 'node-test', part), { recursive: true });
    const r = await run(
      process.execPath,
      [path.join(scope, 'core', 'bin', 'mate.js'), 'options', '--runner', 'vitest'],
      {
        cwd: project,
      },
    );
    assert.equal(r.code, 2, r.output);
    assert.equal(r.output, 'mate: --runner: "vitest" is not a runner installed here; installed: node-test\n');
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test('mate options --runner <name> where no runner package is installed says so (no empty list after "use")', async () => {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-no-runner-'));
  try {
    // @mate-guard/core alone in a project outside the checkout (dist, bin, package.json: what options needs).
    const installed = path.join(project, 'node_modules', '@mate-guard', 'core');
    for (const part of ['dist', 'bin', 'package.json'])
      fs.cpSync(path.join(core, part), path.join(installed, part), { recursive: true });
    const r = await run(process.execPath, [path.join(installed, 'bin', 'mate.js'), 'options', '--runner', 'nope'], {
      cwd: project,
    });
    assert.equal(r.code, 2, r.output);
    assert.equal(
      r.output,
      'mate: --runner: "nope" is not a runner installed here: no runner package is (the README lists them)\n',
    );
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test("mate guard-run exits with the command's status and --help documents the flags", async () => {
  const r = await guardRun([], ['-e', 'process.exitCode = 7']);
  assert.equal(r.code, 7);
  const h = await run(process.execPath, [MATE, 'guard-run', '--help']);
  assert.equal(h.code, 0);
  for (const flag of ['--mode <tail|head>', '--log-allocations', '--alignment <n>'])
    assert.ok(h.stdout.includes(flag), h.stdout);
});

test('--log-allocations prints one line per allocation and free', async () => {
  const r = await guardRun(
    ['--log-allocations'],
    [
      '--expose-gc',
      '-e',
      `
    (function () { Buffer.alloc(100); })();
    gc(); setImmediate(() => setImmediate(() => {}));
  `,
    ],
  );
  assert.equal(r.code, 0, r.output);
  assert.match(
    r.output,
    /\[mate-guard\] alloc #\d+ ptr=0x[0-9a-f]+ requested=100 mapped=8192 mode=tail backend=host test=""/,
  );
  assert.match(r.output, /\[mate-guard\] free #\d+ ptr=0x[0-9a-f]+ requested=100 mode=tail backend=host test=""/);
});

test('every JS buffer form is guarded and behaves as before; unguardable forms are counted', async () => {
  const r = await run(process.execPath, [fixture('buffers.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /passThrough shared=1 resizable=1 subclass=1/);
  assert.match(r.output, /buffers ok/);
});

test('stats(), snapshot() and checkCanaries() describe the allocator', async () => {
  const r = await node(`
    const c = require(${JSON.stringify(core)});
    c.installGuardAllocator({});
    const keep = [Buffer.alloc(10), new Uint8Array(20)];
    c.setCurrentTest('a > b');
    keep.push(Buffer.alloc(30));
    const s = c.stats();
    const snap = c.snapshot().filter((a) => a.size === 30);
    console.log(JSON.stringify({ live: s.live >= 3, guardMethod: s.guardMethod, fallbacks: s.fallbacks,
      snapTest: snap[0].test, snapStack: /\\[eval\\]/.test(snap[0].stack), checks: c.checkCanaries({ all: true }).length }));
  `);
  assert.equal(r.code, 0, r.output);
  assert.deepEqual(JSON.parse(r.stdout), {
    live: true,
    guardMethod: 'madvise-guard',
    fallbacks: 0,
    snapTest: 'a > b',
    snapStack: true,
    checks: 0,
  });
});

test('a synchronous loop of 200,000 dropped 4 KiB guarded buffers finishes and frees them', async () => {
  const r = await run(process.execPath, ['--expose-gc', fixture('gc-loop.js')], { timeout: 300_000 });
  assert.equal(r.code, 0, r.output);
  const m = /allocations=(\d+) fallbacks=(\d+) live=(\d+) guardMethod=(\S+)/.exec(r.output);
  assert.ok(m, r.output);
  assert.ok(Number(m[1]) >= 200000);
  assert.equal(Number(m[2]), 0, 'all guarded');
  assert.ok(Number(m[3]) < 100, `freed promptly (live ${m[3]})`);
});

test('a synchronous loop of 1,000,000 dropped small guarded buffers never holds them all live', async () => {
  const r = await run(process.execPath, [fixture('sync-drop-loop.js')], { timeout: 300_000 });
  assert.equal(r.code, 0, r.output);
  const m = /allocations=(\d+) fallbacks=(\d+) peakLive=(\d+) releasedDuringGc=(\w+)/.exec(r.output);
  assert.ok(m, r.output);
  assert.ok(Number(m[1]) >= 1000000);
  assert.equal(Number(m[2]), 0, 'all guarded');
  assert.equal(m[4], 'true', 'buffers are released during GC on this Node');
  assert.ok(Number(m[3]) < 200000, `released during the loop (peak live ${m[3]})`);
});

for (const flags of [[], ['--compact-on-every-full-gc', '--stress-flush-code']]) {
  test(`each allocation gets its own caller's stack from the stack cache (tier-ups, GCs that move code, async callers, native callbacks, a new formatter)${flags.length ? ' under ' + flags.join(' ') : ''}`, async () => {
    const r = await run(process.execPath, ['--expose-gc', ...flags, fixture('stack-keys.js')], { timeout: 120_000 });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /checked (\d+) of \1; wrong 0; keys reused yes/);
  });
}

test('1,000,000 live guarded 16-byte buffers fit at once with MADV_GUARD_INSTALL', async (t) => {
  const probe = await node(
    `const c = require(${JSON.stringify(core)}); c.installGuardAllocator({}); console.log(c.stats().guardMethod)`,
  );
  if (!probe.stdout.includes('madvise-guard')) {
    t.skip('this kernel has no MADV_GUARD_INSTALL (Linux < 6.13): the mprotect backend caps live allocations instead');
    return;
  }
  const r = await run(process.execPath, ['--max-old-space-size=4096', fixture('million-live.js')], {
    timeout: 400_000,
  });
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /live=(\d{7}) fallbacks=0 guardMethod=madvise-guard total=1000000/);
});

test('with mprotect guard pages past the cap, allocations fall back, are counted, and the run warns once', async () => {
  const env = { MATE_GUARD_FORCE_MPROTECT: '1', MATE_GUARD_MAX_LIVE_MPROTECT: '100' };
  const r = await guardRun([], [fixture('mprotect-cap.js')], { env });
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /guardMethod=mprotect allocations=100 fallbacks=50 sum=11175/);
  assert.match(r.output, /\[mate-guard\] summary: 100 allocations guarded, peak live 100, \d+ unguarded fallbacks/);
  const warnings = r.output.split('\n').filter((l) => l.startsWith('[mate-guard] warning:'));
  assert.equal(warnings.length, 1, r.output);
  assert.match(
    warnings[0],
    /(\d+) allocations ran unguarded: \1 because the live-allocation cap for mprotect guard pages \(vm\.max_map_count\) was reached$/,
  );
});

test('with mprotect guard pages, a loop of short-lived buffers that outlive young collections stays guarded: V8 collects near the cap', async () => {
  const r = await guardRun([], [fixture('mprotect-short-lived.js')], {
    env: { MATE_GUARD_FORCE_MPROTECT: '1' },
    timeout: 300_000,
  });
  assert.equal(r.code, 0, r.output);
  const m =
    /made=(\d+) guardMethod=mprotect maxLive=(\d+) allocations=(\d+) fallbacks=(\d+) collections=(\d+) peakMaps=(\d+) maxMapCount=(\d+)/.exec(
      r.output,
    );
  assert.ok(m, r.output);
  const [made, maxLive, allocations, fallbacks, collections, peakMaps, maxMapCount] = m.slice(1).map(Number);
  assert.equal(made, maxLive * 8);
  // Before: about a quarter of them ran unguarded (the cap reached by dead buffers).
  assert.ok(fallbacks <= made / 1000, `at most 0.1% unguarded: ${fallbacks} of ${made}`);
  assert.ok(collections >= 1, r.output);
  assert.ok(allocations + fallbacks >= made, r.output);
  // The cap leaves Node its mappings: the process stayed well below the kernel's limit.
  assert.ok(peakMaps <= maxMapCount - 15000, `peak mappings ${peakMaps} of ${maxMapCount}`);
  // The summary counts what the allocator counted.
  const summary = /\[mate-guard\] summary: (\d+) allocations guarded, peak live (\d+), (\d+) unguarded fallbacks/.exec(
    r.output,
  );
  assert.ok(summary, r.output);
  assert.ok(Number(summary[2]) < maxLive, r.output);
  assert.equal(Number(summary[3]), fallbacks, r.output);
});

test("with mprotect guard pages near the cap, the summary's guarded and unguarded counts are those of the allocation log", async () => {
  const env = { MATE_GUARD_FORCE_MPROTECT: '1', MATE_GUARD_MAX_LIVE_MPROTECT: '2000' };
  const r = await guardRun(['--log-allocations'], [fixture('mprotect-short-lived.js')], { env, timeout: 300_000 });
  assert.equal(r.code, 0, r.output.slice(-2000));
  const lines = r.stderr.split('\n');
  const unguarded = lines.filter((l) => l.startsWith('[mate-guard] alloc unguarded ')).length;
  const guarded = lines.filter((l) => /^\[mate-guard\] alloc #\d+ /.test(l)).length;
  const summary = /\[mate-guard\] summary: (\d+) allocations guarded, peak live \d+, (\d+) unguarded fallbacks/.exec(
    r.output,
  );
  assert.ok(summary, r.output.slice(-2000));
  assert.equal(Number(summary[1]), guarded);
  assert.equal(Number(summary[2]), unguarded);
  assert.ok(unguarded <= 16000 / 100, `${unguarded} of 16000 unguarded`);
  if (unguarded > 0)
    assert.match(
      r.output,
      new RegExp(`warning: ${unguarded} allocations ran unguarded: ${unguarded} because the live-allocation cap`),
    );
});

test('the mprotect guard method detects overflows too', async () => {
  const r = await guardRun([], [path.join(ROOT, 'examples', 'scripts', 'overflow.js')], {
    env: { MATE_GUARD_FORCE_MPROTECT: '1' },
  });
  assert.equal(r.code, 139, r.output);
  assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE .*\(64 bytes, tail mode\)/);
  assert.match(r.output, /backend host \(mprotect\)/);
});

test('a process on its own warns once at exit about allocations that ran unguarded', async () => {
  const r = await node(
    `
    const c = require(${JSON.stringify(core)});
    c.installGuardAllocator({});
    const keep = [];
    for (let i = 0; i < 20; i++) keep.push(Buffer.alloc(8));
  `,
    [],
    { env: { MATE_GUARD_FORCE_MPROTECT: '1', MATE_GUARD_MAX_LIVE_MPROTECT: '10' } },
  );
  assert.equal(r.code, 0, r.output);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('[mate-guard] warning:'));
  assert.deepEqual(warnings, [
    '[mate-guard] warning: 10 allocations ran unguarded: 10 because the live-allocation cap for mprotect guard pages (vm.max_map_count) was reached',
  ]);
});

test('allocations and frees from several threads at once stay consistent', async () => {
  const r = await run(process.execPath, ['--expose-gc', fixture('threads-stress.js')], { timeout: 300_000 });
  assert.equal(r.code, 0, r.output);
  const m = /allocations=(\d+) frees=(\d+) fallbacks=(\d+) violations=(\d+)/.exec(r.output);
  assert.ok(m, r.output);
  assert.ok(Number(m[1]) >= 100000, `all threads allocated (${m[1]})`);
  assert.ok(Number(m[2]) >= 95000, `and freed (${m[2]})`);
  assert.equal(Number(m[3]), 0);
  assert.equal(Number(m[4]), 0);
});

test("damage found before a test starts is not that test's: it is kept for the end of the file, once", async () => {
  const addon = path.join(ROOT, 'examples', 'addon');
  const r = await node(`
    const c = require(${JSON.stringify(core)});
    const plugins = require(${JSON.stringify(path.join(core, 'dist', 'internal.js'))});
    c.installGuardAllocator({});
    require(${JSON.stringify(addon)}).writeAt(Buffer.from(new ArrayBuffer(29)), 30, 1); // in a hook, outside any test
    plugins.beginGuardedTest('suite > first test');
    console.log(plugins.endGuardedTest().length);
    const outside = plugins.takeOutsideDamage();
    console.log(outside.length + ' ' + outside.map((v) => v.kind).join(','));
    console.log(plugins.takeOutsideDamage().length);
  `);
  assert.equal(r.code, 0, r.output);
  assert.equal(r.stdout, '0\n1 canary-corruption\n0\n');
});

test('damage in a test that made more allocations than the recent list keeps is still found at its end', async () => {
  const addon = path.join(ROOT, 'examples', 'addon');
  const r = await node(`
    const c = require(${JSON.stringify(core)});
    c.installGuardAllocator({});
    const keep = [];
    for (let i = 0; i < 70000; i++) keep.push(Buffer.alloc(16));
    const last = Buffer.alloc(24); // past what the list keeps
    require(${JSON.stringify(addon)}).writeAt(last, -3, 0);
    const found = c.checkCanaries();
    console.log(found.length + ' ' + found.map((v) => v.kind).join(','));
    console.log(c.checkCanaries().length);
  `);
  assert.equal(r.code, 0, r.output);
  assert.equal(r.stdout, '1 canary-corruption\n0\n');
});

test('a stack formatter that throws or allocates never breaks an allocation', async () => {
  const r = await guardRun([], [fixture('throwing-formatter.js')]);
  assert.equal(r.code, 0, r.output);
  assert.match(
    r.output,
    /allocated 16 and 8; stacks: at Object\.<anonymous> \(.*throwing-formatter\.js:12:\d+\) \/ at .*throwing-formatter\.js:14/,
  );
});

test('guarded Jest with default babel-jest transforms a changed test file without stalling', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-guard-babel-'));
  fs.writeFileSync(
    path.join(dir, 'jest.config.js'),
    'module.exports = { rootDir: __dirname, testMatch: ["**/*.test.js"] };\n',
  );
  // A file no cache has seen: babel-jest transforms it and writes its cache.
  fs.writeFileSync(
    path.join(dir, `fresh-${process.pid}-${Date.now()}.test.js`),
    `test('adds', () => { expect(1 + ${Date.now() % 1000}).toBeGreaterThan(0); });\n`,
  );
  const jest = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
  const r = await guardRun([], [jest, '-c', path.join(dir, 'jest.config.js')], { timeout: 60_000 });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /Tests:\s+1 passed, 1 total/);
  assert.match(r.output, /\[mate-guard\] summary: \d+ allocations guarded/);
});

test('mate guard-run of a command that starts no Node process says it guarded nothing, in one line', async () => {
  const r = await run(process.execPath, [
    MATE,
    'guard-run',
    '--',
    'sh',
    '-c',
    'env -u NODE_OPTIONS node -e "Buffer.alloc(8)"',
  ]);
  assert.equal(r.code, 0, r.output);
  assert.match(
    r.stderr,
    /^\[mate-guard\] warning: guarding was asked for, but no test process was guarded \(nothing installed the guard allocator\): the command started no Node process/m,
  );
  assert.doesNotMatch(r.output, /\[mate-guard\] summary:/);
});
