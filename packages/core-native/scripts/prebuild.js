#!/usr/bin/env node
'use strict';
// prepack (npm pack / npm publish): brings the host build up to date and
// copies the binaries built from source (build/Release, this machine's
// linux-x64) and cross built for linux-arm64
// (build/linux-arm64/Release, with the aarch64 cross compiler:
// scripts/install-arm64-tools.sh installs it) into prebuilds/<target>/,
// stripped, each with a manifest.json stating their libc floor, read from
// the symbol versions they import. The loader and the install script use
// them first. postpack (`--clean`) removes the directory again, so a
// checkout never loads a stale copy after its C++ changes.
//   --build linux-arm64   only (re)build the cross target, into build/linux-arm64
//                         (the emulated test tier); no prebuilds are written
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const BINARIES = ['mate_guard.node', 'libmate_guard_cuda.so', 'mate-guard-print'];
/** Cross targets: the toolchain file and the binutils prefix they build with. */
const CROSS = {
  'linux-arm64': { toolchain: path.join(root, 'cmake', 'aarch64-linux-gnu.cmake'), prefix: 'aarch64-linux-gnu-' },
};

function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

if (process.argv.includes('--clean')) {
  fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
  process.exit(0);
}

const fitModule = path.join(root, 'dist', 'install', 'binary-fit.js');
if (!fs.existsSync(fitModule))
  fail(`${path.relative(root, fitModule)} is missing: run npx tsc -b at the repository root first`);
const fit = require(fitModule);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) fail(`${cmd} is needed to make prebuilt binaries (${r.error.message})`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, cmd)));
}

/** An incremental cmake-js build (`npm run build:native` without `args`): a no-op when nothing changed. */
function compile(args = []) {
  run(
    process.execPath,
    [require.resolve('cmake-js/bin/cmake-js', { paths: [root] }), 'compile', '--log-level', 'warn', ...args],
    { cwd: root },
  );
}

/** Cross builds `target` into build/<target>/Release (cmake-js, incremental); false when its compiler is missing. */
function crossBuild(target) {
  const { toolchain, prefix } = CROSS[target];
  if (!onPath(`${prefix}g++`)) return false;
  compile([
    '--out',
    fit.crossBuildDir(target),
    `--CDCMAKE_TOOLCHAIN_FILE=${toolchain}`,
    '--CDMATE_GUARD_UNIT_TESTS=ON',
  ]);
  return true;
}

const buildOnly = process.argv.indexOf('--build');
if (buildOnly !== -1) {
  const target = process.argv[buildOnly + 1];
  if (!CROSS[target]) fail(`--build: "${target}" is not a cross target; use ${Object.keys(CROSS).join(', ')}`);
  if (!crossBuild(target))
    fail(`${CROSS[target].prefix}g++ is not on PATH: run scripts/install-arm64-tools.sh (as root) first`);
  console.log(`prebuild: built ${fit.crossBuildDir(target)}/Release for ${target}`);
  process.exit(0);
}

const host = fit.currentHost();
if (host.target !== fit.NATIVE_BUILD_TARGET)
  fail(`prebuilt binaries are made on ${fit.NATIVE_BUILD_TARGET} only, this is ${host.target}`);

// The host build brought up to date by the build system itself, not judged
// by file times: a library whose own sources had not changed was called
// stale whenever another target's were newer.
compile();
for (const name of BINARIES) {
  const built = path.join(root, 'build', 'Release', name);
  if (!fs.existsSync(built)) fail(`${path.relative(root, built)} was not built (npm run build:native)`);
}

/** The highest version of `prefix`_x.y among the symbol versions `file` imports. */
function floor(objdump, file, prefix) {
  const re = new RegExp(`\\b${prefix}_(\\d+(?:\\.\\d+)+)\\b`, 'g');
  const versions = [...run(objdump, ['-T', file]).matchAll(re)].map((m) => m[1]);
  return versions.sort(fit.compareVersions).pop() ?? null;
}

/** prebuilds/<target>/: the binaries from `from`, stripped with `binutils` (a tool prefix), and their manifest. */
function writePrebuilds(target, from, binutils) {
  const dir = path.join(root, 'prebuilds', target);
  fs.mkdirSync(dir, { recursive: true });
  let glibc = '0';
  let glibcxx = '0';
  for (const name of BINARIES) {
    const out = path.join(dir, name);
    fs.copyFileSync(path.join(from, name), out);
    run(`${binutils}strip`, ['--strip-unneeded', out]);
    const g = floor(`${binutils}objdump`, out, 'GLIBC');
    const gx = floor(`${binutils}objdump`, out, 'GLIBCXX');
    if (!g) fail(`${target}/${name} imports no versioned glibc symbols: is it a glibc build?`);
    if (fit.compareVersions(g, glibc) > 0) glibc = g;
    if (gx && fit.compareVersions(gx, glibcxx) > 0) glibcxx = gx;
  }
  const manifest = { target, glibc, glibcxx: glibcxx === '0' ? null : glibcxx, napi: 9, files: BINARIES };
  fs.writeFileSync(path.join(dir, fit.MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `prebuild: prebuilds/${target}: ${BINARIES.join(', ')} (glibc >= ${glibc}, libstdc++ GLIBCXX >= ${manifest.glibcxx})`,
  );
}

fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
writePrebuilds(host.target, path.join(root, 'build', 'Release'), '');
for (const target of Object.keys(CROSS)) {
  if (crossBuild(target))
    writePrebuilds(target, path.join(root, fit.crossBuildDir(target), 'Release'), CROSS[target].prefix);
  else
    console.warn(
      `prebuild: ${target} left out of this package: ${CROSS[target].prefix}g++ is not on PATH (scripts/install-arm64-tools.sh installs the cross tools)`,
    );
}
