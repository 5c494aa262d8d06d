#!/usr/bin/env node
'use strict';
// prepack (npm pack / npm publish): copies the binaries built from source
// (build/Release) into prebuilds/<target>/, stripped, with manifest.json
// stating their libc floor, read from the symbol versions they import. The
// loader and the install script use them first. postpack (`--clean`)
// removes the directory again, so a checkout never loads a stale copy
// after its C++ changes.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const BINARIES = ['mate_guard.node', 'libmate_guard_cuda.so'];
const SOURCES = ['src/native', 'include', 'CMakeLists.txt'];

function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

if (process.argv.includes('--clean')) {
  fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
  process.exit(0);
}

const fitModule = path.join(root, 'dist', 'install', 'binary-fit.js');
if (!fs.existsSync(fitModule)) fail(`${path.relative(root, fitModule)} is missing: run npx tsc -b at the repository root first`);
const fit = require(fitModule);
const host = fit.currentHost();
if (host.target !== fit.SUPPORTED_TARGET) fail(`prebuilt binaries are made on ${fit.SUPPORTED_TARGET} only, this is ${host.target}`);

function newestMtime(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...fs.readdirSync(p).map((e) => newestMtime(path.join(p, e))));
}

const sourcesTime = Math.max(...SOURCES.map((s) => newestMtime(path.join(root, s))));
for (const name of BINARIES) {
  const built = path.join(root, 'build', 'Release', name);
  if (!fs.existsSync(built)) fail(`${path.relative(root, built)} does not exist: run npm run build:native first`);
  if (fs.statSync(built).mtimeMs < sourcesTime) fail(`${path.relative(root, built)} is older than the C++ sources: run npm run build:native first`);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) fail(`${cmd} is needed to make prebuilt binaries (${r.error.message})`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The highest version of `prefix`_x.y among the symbol versions `file` imports. */
function floor(file, prefix) {
  const re = new RegExp(`\\b${prefix}_(\\d+(?:\\.\\d+)+)\\b`, 'g');
  const versions = [...run('objdump', ['-T', file]).matchAll(re)].map((m) => m[1]);
  return versions.sort(fit.compareVersions).pop() ?? null;
}

const dir = path.join(root, 'prebuilds', host.target);
fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
let glibc = '0';
let glibcxx = '0';
for (const name of BINARIES) {
  const out = path.join(dir, name);
  fs.copyFileSync(path.join(root, 'build', 'Release', name), out);
  run('strip', ['--strip-unneeded', out]);
  const g = floor(out, 'GLIBC');
  const gx = floor(out, 'GLIBCXX');
  if (!g) fail(`${name} imports no versioned glibc symbols: is it a glibc build?`);
  if (fit.compareVersions(g, glibc) > 0) glibc = g;
  if (gx && fit.compareVersions(gx, glibcxx) > 0) glibcxx = gx;
}
const manifest = { target: host.target, glibc, glibcxx: glibcxx === '0' ? null : glibcxx, napi: 9, files: BINARIES };
fs.writeFileSync(path.join(dir, fit.MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`prebuild: prebuilds/${host.target}: ${BINARIES.join(', ')} (glibc >= ${glibc}, libstdc++ GLIBCXX >= ${manifest.glibcxx})`);
