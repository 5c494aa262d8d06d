// Real-world check for @mate-guard/mocha: an established native addon's own
// mocha suite, unguarded and guarded (`--require @mate-guard/mocha
// --guard-alloc`), run alternately; prints pass/fail and the median wall
// times and their ratio.
//
//   node bench/mocha-realworld.mjs [dir] [--reps N] [--setup-only]
//
// The addon is ref-napi@3.0.3 (pointer and memory helpers for Buffers; its
// npm tarball ships its mocha tests). It is set up in `dir` (default
// <tmp>/mate-mocha-realworld), outside this repository: npm pack, the
// prebuilt binaries deleted, then built from source with node-gyp (offline
// needs an npm `nodedir`), plus weak-napi (an optional test dependency,
// also built from source). The suite runs with this repo's mocha.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './lib/side-by-side.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const PLUGIN = path.join(ROOT, 'packages', 'mocha-plugin');
const PACKAGE = 'ref-napi@3.0.3';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const positional = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1] === '--reps'));
const base = path.resolve(positional[0] ?? path.join(os.tmpdir(), 'mate-mocha-realworld'));
const reps = Number(value('--reps', '5'));
const dir = path.join(base, 'ref-napi');

function npm(cwd, ...npmArgs) {
  execFileSync('npm', [...npmArgs, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, stdio: 'inherit' });
}

function setup() {
  if (fs.existsSync(path.join(dir, 'build', 'Release', 'binding.node'))) return;
  fs.mkdirSync(base, { recursive: true });
  const tgz = execFileSync('npm', ['pack', PACKAGE, '--silent'], { cwd: base, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  execFileSync('tar', ['xzf', path.join(base, tgz), '-C', dir, '--strip-components=1']);
  fs.rmSync(path.join(dir, 'prebuilds'), { recursive: true, force: true }); // build the addon from source
  // Its devDependencies are tooling (nyc, old mocha, docs); the tests need only weak-napi.
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  delete pkg.devDependencies;
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2));
  npm(dir, 'install', '--build-from-source');
  npm(dir, 'install', '--no-save', '--build-from-source', 'weak-napi@2');
  for (const addon of [path.join(dir, 'build'), path.join(dir, 'node_modules', 'weak-napi', 'build')]) {
    if (!fs.existsSync(path.join(addon, 'Release'))) throw new Error(`${addon}/Release was not built from source`);
  }
}

function runSuite(guarded) {
  const extra = guarded ? ['--require', PLUGIN, '--guard-alloc'] : [];
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [MOCHA, '--expose-gc', '--reporter', 'dot', ...extra], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const output = r.stdout + r.stderr;
  const passing = /(\d+) passing/.exec(output)?.[1];
  const failing = /(\d+) failing/.exec(output)?.[1] ?? '0';
  return { ms, code: r.status, signal: r.signal, passing: Number(passing ?? 0), failing: Number(failing), output };
}

setup();
if (flag('--setup-only')) process.exit(0);
const times = { plain: [], guarded: [] };
let last;
for (let i = 0; i < reps; i++) {
  for (const mode of i % 2 ? ['guarded', 'plain'] : ['plain', 'guarded']) {
    const r = runSuite(mode === 'guarded');
    if (r.code !== 0 || r.failing > 0 || r.passing === 0) {
      console.error(r.output);
      console.error(`${PACKAGE} suite ${mode}: exit ${r.code ?? r.signal}, ${r.passing} passing, ${r.failing} failing`);
      process.exit(1);
    }
    times[mode].push(r.ms);
    if (mode === 'guarded') last = r;
  }
}
const summary = last.output.split('\n').find((l) => l.startsWith('[mate-guard] summary:'));
const plain = median(times.plain);
const guarded = median(times.guarded);
console.log(
  `${PACKAGE} mocha suite: ${last.passing} passing unguarded and guarded, ${reps} runs each (node ${process.version}, ${os.cpus().length} cores)`,
);
console.log(`guarded run: ${summary}`);
console.log(
  `median wall time: unguarded ${plain.toFixed(0)} ms, guarded ${guarded.toFixed(0)} ms, ratio ${(guarded / plain).toFixed(2)}x (target <= 1.5x)`,
);
