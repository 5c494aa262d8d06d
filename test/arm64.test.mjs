// The linux-arm64 tier: the arm64 build (cross built here by
// scripts/prebuild.js --build linux-arm64, and the example addon's) run by
// an arm64 Node under qemu-user emulation. Needs the tools
// scripts/install-arm64-tools.sh installs (CI runs it); skipped, saying so,
// where they are missing.
//
// qemu-user cannot run an arm64 program that a guarded process starts
// itself (no binfmt handler): runners that spawn per-file workers and the
// in-process report printer are out of reach here. The supervisor
// (`mate guard-run`, x86-64) starts the arm64 program through a wrapper and
// renders its reports, and node:test runs its file in-process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { MATE, reportLines, ROOT, run } from './helpers/run.mjs';

const SYSROOT = '/usr/aarch64-linux-gnu';
const ARM64_NODE = path.join(ROOT, '.arm64', 'node', 'bin', 'node');
const CORE = path.join(ROOT, 'packages', 'core-native');
const ADDON_DIR = path.join(ROOT, 'examples', 'addon');
const TOOLCHAIN = path.join(CORE, 'cmake', 'aarch64-linux-gnu.cmake');
const SIGSEGV_EXIT = 139;
const TIMEOUT = 240_000;

function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, cmd)));
}

const missing = [
  !onPath('qemu-aarch64-static') && 'qemu-aarch64-static',
  !onPath('aarch64-linux-gnu-g++') && 'aarch64-linux-gnu-g++',
  !fs.existsSync(path.join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1')) && `${SYSROOT} (the arm64 C runtime)`,
  !fs.existsSync(ARM64_NODE) && '.arm64/node/bin/node (the arm64 Node)',
].filter(Boolean);

const script = (name) => path.join(ROOT, 'examples', 'scripts', name);
/** `#0 <fn> examples/addon/src/<file>:<line> (buggy_addon.node+0x…)`: the access site, symbolized. */
const site = (fn, file) =>
  new RegExp(
    `^==mate-guard== {3}#0 ${fn} \\S*examples/addon/src/${file}:\\d+ \\(buggy_addon\\.node\\+0x[0-9a-f]+\\)$`,
    'm',
  );

if (missing.length) {
  test('linux-arm64 tier under qemu', {
    skip: `skipped: ${missing.join(', ')} missing (bash scripts/install-arm64-tools.sh, as root, installs them)`,
  }, () => {});
} else {
  describe('linux-arm64 under qemu', { timeout: 15 * 60_000 }, () => {
    let bin; // a folder whose `node` runs the arm64 Node under qemu
    const node = (args, opts) => run(path.join(bin, 'node'), args, { timeout: TIMEOUT, ...opts });
    const guardRun = (flags, args, opts) =>
      run(process.execPath, [MATE, 'guard-run', ...flags, '--', path.join(bin, 'node'), ...args], {
        timeout: TIMEOUT,
        ...opts,
      });

    before(() => {
      const built = spawnSync(process.execPath, [path.join(CORE, 'scripts', 'prebuild.js'), '--build', 'linux-arm64'], {
        encoding: 'utf8',
      });
      assert.equal(built.status, 0, `cross build of the core:\n${built.stdout}${built.stderr}`);
      const cmakeJs = path.join(ROOT, 'node_modules', 'cmake-js', 'bin', 'cmake-js');
      const addon = spawnSync(
        process.execPath,
        [
          cmakeJs,
          'compile',
          '--log-level',
          'warn',
          '--out',
          'build/linux-arm64',
          `--CDCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN}`,
        ],
        { cwd: ADDON_DIR, encoding: 'utf8' },
      );
      assert.equal(addon.status, 0, `cross build of the example addon:\n${addon.stdout}${addon.stderr}`);
      bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-arm64-'));
      fs.writeFileSync(
        path.join(bin, 'node'),
        `#!/bin/sh\nexec qemu-aarch64-static -L ${SYSROOT} ${ARM64_NODE} "$@"\n`,
        { mode: 0o755 },
      );
    });
    after(() => bin && fs.rmSync(bin, { recursive: true, force: true }));

    test('the C++ unit tests pass on arm64 (the allocator, signals, crash handler, ESR and instruction fault decoding)', async () => {
      const r = await run(
        'qemu-aarch64-static',
        ['-L', SYSROOT, path.join(CORE, 'build', 'linux-arm64', 'mate_guard_unit_tests')],
        { timeout: TIMEOUT },
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /^ok {3}arm64_a_data_abort_esr_record_says_write_by_wnr$/m);
      assert.match(r.output, /^ok {3}arm64_without_an_esr_record_the_faulting_instruction_says_it$/m);
      assert.match(r.output, /^\d+ passed, 0 failed$/m);
    });

    test('the core API on arm64: the loader takes the arm64 build, install contract, bad config, stats, canary damage found', async () => {
      const r = await node([
        '-e',
        `
        const c = require(${JSON.stringify(CORE)});
        console.log('arch', process.arch);
        c.installGuardAllocator({ mode: 'tail' });
        c.installGuardAllocator({ mode: 'tail' });
        console.log('loaded', Object.keys(require.cache).filter((f) => f.endsWith('mate_guard.node')).join(' '));
        try { c.installGuardAllocator({ mode: 'head' }); } catch (e) { console.log('threw:', e.message); }
        const b = c.guardedBuffer(100);
        b.fill(7);
        console.log('buffer', b.length, b[99]);
        const addon = require(${JSON.stringify(ADDON_DIR)});
        console.log('sum', addon.sum(Buffer.from([1, 2, 3, 4])));
        const s = c.stats();
        console.log('stats', s.allocations > 0, s.violations);
        const d = Buffer.alloc(8);
        addon.writeAt(d, -1, 1);
        const v = c.checkCanaries();
        console.log('violations', v.length, v[0]?.kind, /1 byte before the start of allocation #\\d+ \\(8 bytes, tail mode\\)/.test(v[0]?.text ?? ''));
      `,
      ]);
      assert.equal(r.code, 0, r.output);
      assert.match(r.stdout, /^arch arm64$/m);
      assert.equal(
        r.stdout.match(/^loaded (.*)$/m)?.[1],
        path.join(CORE, 'build', 'linux-arm64', 'Release', 'mate_guard.node'),
        r.output,
      );
      assert.match(r.stdout, /^threw: Guard allocator is already active with a different configuration/m);
      assert.match(r.stdout, /^buffer 100 7$/m);
      assert.match(r.stdout, /^sum 10$/m);
      assert.match(r.stdout, /^violations 1 canary-corruption true$/m);
    });

    test('the packed @mate-guard/core carries prebuilds/linux-arm64/ with its glibc floor, and the arm64 Node loads it from there', async () => {
      const dest = fs.mkdtempSync(path.join(bin, 'pack-'));
      const packed = await run('npm', ['pack', '-w', '@mate-guard/core', '--pack-destination', dest], {
        timeout: TIMEOUT,
      });
      assert.equal(packed.code, 0, packed.output);
      assert.match(
        packed.output,
        /prebuild: prebuilds\/linux-arm64: mate_guard\.node, libmate_guard_cuda\.so, mate-guard-print \(glibc >= 2\.\d+, /,
      );
      const tarball = path.join(
        dest,
        fs.readdirSync(dest).find((f) => f.endsWith('.tgz')),
      );
      // Both targets' binaries, stripped: a small download (about 3.0 MiB today;
      // unstripped, the binaries alone would be several times that).
      assert.ok(fs.statSync(tarball).size < 4 << 20, `the tarball is ${fs.statSync(tarball).size} bytes`);
      assert.equal(spawnSync('tar', ['xzf', tarball, '-C', dest]).status, 0);
      const pkg = path.join(dest, 'package');
      const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'prebuilds', 'linux-arm64', 'manifest.json'), 'utf8'));
      assert.equal(manifest.target, 'linux-arm64');
      assert.match(manifest.glibc, /^2\.\d+$/);
      assert.deepEqual(manifest.files, ['mate_guard.node', 'libmate_guard_cuda.so', 'mate-guard-print']);
      const r = await node([
        '-e',
        `
        const c = require(${JSON.stringify(pkg)});
        c.installGuardAllocator({});
        console.log('buffer', c.guardedBuffer(10).length);
        console.log('loaded', Object.keys(require.cache).filter((f) => f.endsWith('.node')).join(' '));
      `,
      ]);
      assert.equal(r.code, 0, r.output);
      assert.match(r.stdout, /^buffer 10$/m);
      assert.equal(
        r.stdout.match(/^loaded (.*)$/m)?.[1],
        path.join(pkg, 'prebuilds', 'linux-arm64', 'mate_guard.node'),
        r.output,
      );
    });

    test('a bad config is refused with a clear error on arm64 too', async () => {
      const r = await node([
        '-e',
        `
        const c = require(${JSON.stringify(CORE)});
        try { c.installGuardAllocator({ alignment: 3 }); console.log('no error'); }
        catch (e) { console.log(e.name + ': ' + e.message); console.log('active', c.isGuardAllocatorActive()); }
      `,
      ]);
      assert.ok(
        r.output.includes('GuardConfigError: alignment: 3 is not allowed; use a power of two from 1 to 4096'),
        r.output,
      );
      assert.match(r.output, /active false/);
    });

    test('overflow by one: heap-buffer-overflow on WRITE at the addon line, guard page checked not assumed (mprotect backend under qemu)', async () => {
      const r = await guardRun([], [script('overflow.js')]);
      assert.equal(r.code, SIGSEGV_EXIT, r.output);
      const lines = reportLines(r.output).filter((l) => !l.includes('the report printer could not run'));
      assert.match(
        lines[0],
        /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
        r.output,
      );
      assert.match(r.output, site('FillInclusive', 'buggy\\.cc'));
      // qemu accepts MADV_GUARD_INSTALL and does nothing: the probe sees the page still readable.
      assert.match(r.output, /backend host \(mprotect\)/);
      assert.match(r.output, /at Object\.<anonymous> \(.*examples\/scripts\/overflow\.js:5:\d+\)/);
    });

    test('underflow by one in head mode: heap-buffer-underflow on WRITE at the addon line', async () => {
      const r = await guardRun(['--mode', 'head'], [script('underflow.js')]);
      assert.equal(r.code, SIGSEGV_EXIT, r.output);
      const lines = reportLines(r.output).filter((l) => !l.includes('the report printer could not run'));
      assert.match(
        lines[0],
        /ERROR: heap-buffer-underflow on WRITE at 0x[0-9a-f]+: 1 byte before the start of allocation #\d+ \(64 bytes, head mode\)/,
        r.output,
      );
      assert.match(r.output, site('ReverseFill', 'buggy\\.cc'));
    });

    test('use after free of a JS buffer the GC freed: heap-use-after-free on WRITE, with who freed it', async () => {
      const r = await guardRun([], ['--expose-gc', script('use-after-free.js')]);
      assert.equal(r.code, SIGSEGV_EXIT, r.output);
      const lines = reportLines(r.output).filter((l) => !l.includes('the report printer could not run'));
      assert.match(
        lines[0],
        /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: .*freed allocation #\d+ \(256 bytes, tail mode\)/,
        r.output,
      );
      assert.match(r.output, site('TouchRetained', 'buggy\\.cc'));
      assert.ok(
        lines.includes('==mate-guard== freed by the garbage collector: no JS reference to the buffer was left'),
        r.output,
      );
    });

    test('native heap (import redirection through R_AARCH64_JUMP_SLOT / GLOB_DAT): malloc overrun and use after free', async () => {
      const over = await guardRun(['--native', '*buggy_addon.node'], [script('native-heap.js'), 'mallocOverflow']);
      assert.equal(over.code, SIGSEGV_EXIT, over.output);
      assert.match(
        over.output,
        /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
      );
      assert.match(over.output, /backend native-heap/);
      assert.match(
        over.output,
        /==mate-guard== allocated at:\n==mate-guard== {3}#0 MallocOverflow \S*examples\/addon\/src\/native_heap\.cc:\d+ /,
      );
      const uaf = await guardRun(['--native', '*buggy_addon.node'], [script('native-heap.js'), 'useAfterFree']);
      assert.equal(uaf.code, SIGSEGV_EXIT, uaf.output);
      assert.match(
        uaf.output,
        /ERROR: heap-use-after-free on WRITE at 0x[0-9a-f]+: offset 0 inside freed allocation #\d+ \(64 bytes, tail mode\)/,
      );
      assert.match(
        uaf.output,
        /==mate-guard== freed at:\n==mate-guard== {3}#0 UseAfterFree \S*examples\/addon\/src\/native_heap\.cc:\d+ /,
      );
    });

    test('the death handler on arm64: abort() and a wild write outside guarded memory are reported with the test and the addon frame', async () => {
      const die = (kind) => guardRun([], [path.join(ROOT, 'test', 'fixtures', 'core', 'die.js'), kind]);
      const aborted = await die('abort');
      assert.equal(aborted.code, 134, aborted.output);
      assert.match(
        aborted.output,
        /^==mate-guard== ERROR: deadly-signal: SIGABRT \(abort\(\): .*\): the process dies$/m,
      );
      assert.match(aborted.output, /^==mate-guard== test: spec\/deaths\.test\.js > deaths > abort$/m);
      assert.match(
        aborted.output,
        /^==mate-guard== {3}#\d+ Abort \S*examples\/addon\/src\/deaths\.cc:\d+ \(buggy_addon\.node\+0x[0-9a-f]+\)$/m,
      );
      const wild = await die('wildWrite');
      assert.equal(wild.code, SIGSEGV_EXIT, wild.output);
      assert.match(
        wild.output,
        /^==mate-guard== ERROR: deadly-signal: SIGSEGV on WRITE at 0xdead0000 \(address not mapped\), outside guarded memory: the process dies$/m,
      );
      assert.match(wild.output, site('WildWrite', 'deaths\\.cc'));
    });

    test('a clean program runs to the end under guard-run: exit 0, no violations', async () => {
      const r = await guardRun([], [script('clean.js')]);
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /clean: sum ok, wasm trap ok/);
      assert.match(r.output, /\[mate-guard\] summary: \d+ allocations? guarded, .* 0 violations/);
    });

    test('node:test with the plugin (in-process): the overflow names the test, its report renders with the access site; a clean file passes', async () => {
      const env = {
        MATE_NODE_TEST_GUARD_ALLOC: '1',
        MATE_NODE_TEST_GUARD_REPORT_DIR: fs.mkdtempSync(path.join(bin, 'reports-')),
      };
      const bad = await node(
        ['--require', '@mate-guard/node-test', path.join(ROOT, 'examples', 'node-test', 'overflow.test.mjs')],
        { env },
      );
      assert.equal(bad.signal ?? bad.code, bad.signal ? 'SIGSEGV' : SIGSEGV_EXIT, bad.output);
      assert.match(
        bad.output,
        /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: allocation #\d+ \(64 bytes, tail mode\)/,
      );
      assert.match(
        bad.output,
        /==mate-guard== test: examples\/node-test\/overflow\.test\.mjs > overflow by one > fills a 64-byte buffer/,
      );
      const file = bad.output.match(/the full report is in (\S+\.json)/)?.[1];
      assert.ok(file && fs.existsSync(file), bad.output);
      const shown = await run(process.execPath, [MATE, 'report', path.dirname(file)]);
      assert.equal(shown.code, 1, shown.output);
      assert.match(
        shown.output,
        /ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
      );
      assert.match(shown.output, site('FillInclusive', 'buggy\\.cc'));

      const clean = await node(
        ['--require', '@mate-guard/node-test', path.join(ROOT, 'examples', 'node-test', 'clean.test.mjs')],
        { env },
      );
      assert.equal(clean.code, 0, clean.output);
      assert.match(clean.output, /^# fail 0$/m);
      assert.match(clean.output, /\[mate-guard\] summary: \d+ allocations? guarded, .* 0 violations/);
    });
  });
}
