// `mate build-native`: the source build of the native allocator
// for a machine no prebuilt binary fits (binary-fit.ts says which). The
// package has no install script (pnpm refuses to install a dependency with
// an unapproved one, npm warns): the loader's one-line error names this
// command instead. cmake-js in Node-API mode (no header download); its
// output goes to a log file, and every outcome is one line.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { binaryCandidates, compareVersions, currentHost, firstLine, unsupportedReason } from '../install/binary-fit';

const packageRoot = path.resolve(__dirname, '..', '..');
const LOG = path.join(packageRoot, 'build', 'mate-guard-build.log');

export const BUILD_NATIVE_USAGE = `Usage: mate build-native

Builds the native allocator from @mate-guard/core's own sources (needs cmake
>= 3.15, make or ninja, and a C++17 compiler) when its prebuilt binary does
not fit or load on this machine. The build's output goes to
${path.relative(packageRoot, LOG)} in the package.
`;

/** Why `file` does not load in a fresh Node process (null: it loads); a crash there cannot take this one down. */
export function loadProblem(file: string): string | null {
  const probe = `try { require(${JSON.stringify(file)}); } catch (e) { process.stderr.write(String(e.message).split('\\n')[0]); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (r.status === 0) return null;
  if (r.signal) return `crashed while loading (${r.signal})`;
  return `does not load (${firstLine(r.stderr || 'no message')})`;
}

/** Whether one of `names` runs; its first output line. */
function findTool(names: readonly string[]): string | null {
  for (const name of names) {
    const r = spawnSync(name, ['--version'], { encoding: 'utf8' });
    if (!r.error && r.status === 0) return firstLine(`${r.stdout}${r.stderr}`);
  }
  return null;
}

/** What a source build lacks on this PATH ([] when cmake, make and a C++ compiler are there). */
function missingBuildTools(): string[] {
  const missing: string[] = [];
  const cmake = findTool(['cmake']);
  const version = cmake && /(\d+\.\d+(\.\d+)?)/.exec(cmake)?.[1];
  if (!cmake) missing.push('no cmake on PATH');
  else if (!version || compareVersions(version, '3.15') < 0)
    missing.push(`cmake is ${version ?? 'of unknown version'}, 3.15 or later is needed`);
  if (!findTool(['make', 'ninja'])) missing.push('no make or ninja on PATH');
  const compilers = process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++'];
  if (!findTool(compilers)) missing.push(`no C++ compiler on PATH (tried ${compilers.join(', ')})`);
  return missing;
}

/** Runs cmake-js in the package; why it failed, or null. */
function compile(): string | null {
  fs.mkdirSync(path.dirname(LOG), { recursive: true });
  let cmakeJs: string;
  try {
    cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [packageRoot] });
  } catch {
    return 'cmake-js (a dependency of @mate-guard/core) is not installed';
  }
  const r = spawnSync(process.execPath, [cmakeJs, 'compile', '--log-level', 'warn'], {
    cwd: packageRoot,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  fs.writeFileSync(LOG, output);
  if (r.status === 0) return null;
  const firstError = output.split('\n').find((l) => /error/i.test(l));
  return `the source build failed (${firstError ? firstError.trim() : `cmake-js exited ${r.status ?? r.signal}`}; full output in ${LOG})`;
}

/** The command: status 0 when a binary that fits and loads is there at the end. */
export function buildNative(): number {
  const say = (line: string) => process.stdout.write(`mate build-native: ${line}\n`);
  const fail = (line: string) => {
    process.stderr.write(`mate build-native: ${line}\n`);
    return 1;
  };
  const host = currentHost();
  const refused = unsupportedReason(host);
  if (refused) return fail(refused);
  const tried: string[] = [];
  const [prebuilt] = binaryCandidates(packageRoot, 'mate_guard.node', host);
  const problem = prebuilt.problem ?? loadProblem(prebuilt.file);
  if (!problem) {
    say(`${prebuilt.label} fits this machine and loads: nothing to build`);
    return 0;
  }
  tried.push(`prebuilt ${prebuilt.label}: ${problem}`);
  const missing = missingBuildTools();
  if (missing.length) {
    return fail(
      `cannot build for ${host.target} (${tried.join('; ')}; ${missing.join(', ')}): install cmake >= 3.15, make and a C++17 compiler (g++ >= 9 or clang++ >= 10), then run it again`,
    );
  }
  const failure = compile();
  if (failure) return fail(`cannot build for ${host.target} (${tried.join('; ')}; ${failure})`);
  const built = path.join(packageRoot, 'build', 'Release', 'mate_guard.node');
  const builtProblem = loadProblem(built);
  if (builtProblem) return fail(`built from source, but ${path.relative(packageRoot, built)} ${builtProblem}`);
  say(`built the native allocator from source (${tried.join('; ')}): ${built}`);
  return 0;
}
