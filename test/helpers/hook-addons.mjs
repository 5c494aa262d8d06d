// Builds the allocator-hook fixture (test/fixtures/native-heap/hook-vars.c)
// the three ways it sets its hooks, plus a copy no glob chooses (unchosen_vars), into
// test/fixtures/native-heap/build/ (ignored by git), once per source change.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { buildSharedObject, cCompiler } from './compile.mjs';
import { ROOT } from './run.mjs';

const SOURCE = path.join(ROOT, 'test', 'fixtures', 'native-heap', 'hook-vars.c');
export const HOOK_DIR = path.join(ROOT, 'test', 'fixtures', 'native-heap', 'build');

/** name -> the defines it is built with. */
const VARIANTS = { hook_ctor: ['-DSETUP_IN_CTOR'], hook_init: ['-DSETUP_IN_INIT'], hook_call: [], unchosen_vars: [] };

/** The glob that chooses the three hook modules (never unchosen_vars). */
export const HOOK_GLOB = '*hook_*.node';

/** Why the addons can't be built ('' when they can). */
export function hookAddonsMissing() {
  return cCompiler() ? '' : 'no C compiler on PATH';
}

/** `name`.node in HOOK_DIR from `source`, rebuilt when the source is newer. */
const build = (source, name, flags = [], libs = []) =>
  buildSharedObject(cCompiler(), path.join(HOOK_DIR, `${name}.node`), [source], {
    flags: ['-O2', '-g', ...flags],
    libs,
  });

/** Builds what is missing or older than the source; returns HOOK_DIR. */
export function buildHookAddons() {
  for (const [name, defines] of Object.entries(VARIANTS)) build(SOURCE, name, defines);
  return HOOK_DIR;
}

/**
 * The alignment fixture (align.c) as sse_user.node (aligned SSE loads of
 * its blocks, as libvips) and gap_addon.node (a planted one-byte gap
 * overflow); returns HOOK_DIR.
 */
export function buildAlignAddons() {
  const source = path.join(ROOT, 'test', 'fixtures', 'native-heap', 'align.c');
  for (const name of ['sse_user', 'gap_addon']) build(source, name);
  return HOOK_DIR;
}

/** own_alloc.node (own-allocator.c): an addon that allocates from its own arena; returns its path. */
export function buildOwnAllocatorAddon() {
  return build(path.join(ROOT, 'test', 'fixtures', 'native-heap', 'own-allocator.c'), 'own_alloc');
}

/** An addon with no heap (no allocation import, no memory mapping), as no_heap.node; returns its path. */
export function buildNoHeapAddon() {
  return build(path.join(ROOT, 'test', 'fixtures', 'native-heap', 'no-heap.c'), 'no_heap');
}

const LIBXML2_HEADERS = '/usr/include/libxml2';

/** Why the real-libxml2 addon can't be built ('' when it can): the system's libxml2 and its headers. */
export function libxml2Missing() {
  if (!cCompiler()) return 'no C compiler on PATH';
  if (!fs.existsSync(path.join(LIBXML2_HEADERS, 'libxml', 'xmlmemory.h'))) return 'no libxml2 headers (libxml2-dev)';
  return '';
}

/** Builds xml_hooks.node (test/fixtures/native-heap/libxml2-hooks.c, linked to the system's libxml2); returns its path. */
export function buildLibxml2Addon() {
  return build(
    path.join(ROOT, 'test', 'fixtures', 'native-heap', 'libxml2-hooks.c'),
    'xml_hooks',
    ['-I', LIBXML2_HEADERS],
    ['-lxml2'],
  );
}

/** cross_thread.node (cross-thread.c): a stale use from another thread right after a free; returns its path. */
export function buildCrossThreadAddon() {
  return build(path.join(ROOT, 'test', 'fixtures', 'native-heap', 'cross-thread.c'), 'cross_thread', ['-pthread']);
}

/**
 * libxmljs2 from the npm registry (libxml2 built into its addon, with
 * xmlMemSetup wrappers of its own), built here with node-gyp against this
 * Node's headers, once per run of the tests. Returns { dir } (the package,
 * ready to require), or { why } when it cannot be had here.
 */
export function buildLibxmljs2(version = '0.35.0') {
  const nodedir = path.resolve(path.dirname(process.execPath), '..');
  if (!fs.existsSync(path.join(nodedir, 'include', 'node', 'node.h')))
    return { why: `no Node headers under ${nodedir}/include/node` };
  if (!cCompiler()) return { why: 'no C compiler on PATH' };
  const top = path.join(HOOK_DIR, `libxmljs2-${version}`);
  const dir = path.join(top, 'package');
  const addon = path.join(dir, 'build', 'Release', 'xmljs.node');
  if (fs.existsSync(addon)) return { dir };
  fs.rmSync(top, { recursive: true, force: true });
  fs.mkdirSync(top, { recursive: true });
  const step = (what, cmd, args, cwd) => {
    const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 600_000 });
    return r.status === 0
      ? ''
      : `${what} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}`;
  };
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const why =
    step('npm pack libxmljs2', npm, ['pack', `libxmljs2@${version}`, '--silent'], top) ||
    step('unpacking libxmljs2', 'tar', ['xzf', `libxmljs2-${version}.tgz`], top) ||
    // Its install script would fetch a prebuilt binary from GitHub: built here instead.
    step(
      "installing libxmljs2's dependencies",
      npm,
      ['install', '--ignore-scripts', '--omit=dev', '--no-audit', '--no-fund', '--silent'],
      dir,
    ) ||
    step(
      'building libxmljs2 (node-gyp)',
      process.execPath,
      [path.join(dir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), 'rebuild', `--nodedir=${nodedir}`, '-j', '2'],
      dir,
    );
  return why ? { why } : { dir };
}
