#!/usr/bin/env node
'use strict';
// npm install of @mate-guard/core. The prebuilt binary for this machine
// (prebuilds/<target>/, see dist/allocator/binary-fit.js) when it fits and
// loads: nothing to build, no compiler needed. Else a source build with
// cmake-js in Node-API mode (no header download), its output kept in a log
// file. Every outcome but success is one line naming what was tried and
// what to do.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const NAME = '@mate-guard/core';
const LOG = path.join('build', 'mate-guard-build.log');

/** Why `file` does not load in a fresh Node process (null: it loads). */
function loadProblem(file) {
  const probe = `try { require(${JSON.stringify(file)}); } catch (e) { process.stderr.write(String(e.message).split('\\n')[0]); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (r.status === 0) return null;
  if (r.signal) return `crashed while loading (${r.signal})`;
  return `does not load (${(r.stderr || 'no message').trim().split('\n')[0]})`;
}

/** The first tool of `names` that runs, with its first output line; null if none does. */
function findTool(names, args = ['--version']) {
  for (const name of names) {
    const r = spawnSync(name, args, { encoding: 'utf8' });
    if (!r.error && r.status === 0) return { name, version: `${r.stdout}${r.stderr}`.split('\n')[0] };
  }
  return null;
}

/** What a source build lacks on this PATH ([] when cmake, make and a C++ compiler are there). */
function missingBuildTools(compareVersions) {
  const missing = [];
  const cmake = findTool(['cmake']);
  const cmakeVersion = cmake && /(\d+\.\d+(\.\d+)?)/.exec(cmake.version);
  if (!cmake) missing.push('no cmake on PATH');
  else if (!cmakeVersion || compareVersions(cmakeVersion[1], '3.15') < 0) missing.push(`cmake is ${cmakeVersion ? cmakeVersion[1] : 'of unknown version'}, 3.15 or later is needed`);
  if (!findTool(['make', 'ninja'])) missing.push('no make or ninja on PATH');
  const compilers = process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++'];
  if (!findTool(compilers)) missing.push(`no C++ compiler on PATH (tried ${compilers.join(', ')})`);
  return missing;
}

/** Builds build/Release from the package's sources; the output goes to LOG. Returns why it failed, or null. */
function buildFromSource() {
  fs.mkdirSync(path.join(root, 'build'), { recursive: true });
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  const r = spawnSync(process.execPath, [cmakeJs, 'compile', '--log-level', 'warn'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  fs.writeFileSync(path.join(root, LOG), output);
  if (r.status === 0) return null;
  const firstError = output.split('\n').find((l) => /error/i.test(l));
  return `the source build failed (${firstError ? firstError.trim() : `cmake-js exited ${r.status ?? r.signal}`}; full output in ${path.join(root, LOG)})`;
}

function fail(line) {
  console.error(`${NAME}: ${line}`);
  process.exit(1);
}

const fitModule = path.join(root, 'dist', 'allocator', 'binary-fit.js');
if (!fs.existsSync(fitModule)) {
  // A repository checkout before its TypeScript build (the published
  // package always has dist/): build from source; the root's postinstall
  // builds the rest.
  const why = buildFromSource();
  if (why) fail(why);
  process.exit(0);
}

const fit = require(fitModule);
const host = fit.currentHost();
const refused = fit.unsupportedReason(host);
if (refused) {
  // Not an install failure: a project shared with such machines still
  // installs there; mate-guard itself refuses to start with this line.
  console.warn(`${NAME}: ${refused}; installed without a native allocator, so mate-guard will refuse to run here`);
  process.exit(0);
}

const tried = [];
const [prebuilt] = fit.binaryCandidates(root, 'mate_guard.node', host);
const problem = prebuilt.problem ?? loadProblem(prebuilt.file);
if (!problem) process.exit(0);
tried.push(`prebuilt ${prebuilt.label}: ${problem}`);

const missing = missingBuildTools(fit.compareVersions);
if (missing.length) fail(`no native allocator for ${host.target} (tried ${tried.join('; ')}; source build: ${missing.join(', ')}); ${fit.REBUILD_HINT}`);
const buildFailure = buildFromSource();
if (buildFailure) fail(`no native allocator for ${host.target} (tried ${tried.join('; ')}; ${buildFailure})`);
const built = path.join(root, 'build', 'Release', 'mate_guard.node');
const builtProblem = loadProblem(built);
if (builtProblem) fail(`no native allocator for ${host.target} (tried ${tried.join('; ')}; built from source, but ${path.relative(root, built)} ${builtProblem})`);
console.log(`${NAME}: built the native allocator from source (${tried.join('; ')})`);
