// Wall time of a clean, buffer-heavy mocha fixture suite
// (test/fixtures/mocha/suite: 204 tests, ~3,600 buffers, the real examples
// addon), unguarded (`mocha --require @mate-guard/mocha`, the plugin loaded
// but off) vs guarded (`... --guard-alloc`), run alternately, several
// repetitions, medians and their ratio.
// Run: node bench/mocha-suite.mjs [--reps 7] [--parallel]
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { sideBySide } from './lib/side-by-side.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const reps = Number(arg('reps', 7));
const parallel = process.argv.includes('--parallel');
const TARGET = 1.3;

const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const cwd = path.join(root, 'test', 'fixtures', 'mocha');
const common = ['--require', '@mate-guard/mocha', '--reporter', 'dot', ...(parallel ? ['--parallel'] : []), 'suite/'];

const env = { ...process.env, FORCE_COLOR: '0' };
for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];

const variants = [
  { name: 'unguarded (plugin loaded, off)', args: [mocha, ...common], guarded: false },
  { name: 'guarded (--guard-alloc)', args: [mocha, '--guard-alloc', ...common], guarded: true },
];

function once(v) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, v.args, { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !/204 passing/.test(r.stdout)) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`${v.name} failed with exit ${r.status}`);
  }
  if (v.guarded && !/\[mate-guard\] summary: [1-9]\d* allocations guarded/.test(r.stderr)) {
    throw new Error('the guarded run guarded nothing: the comparison would be meaningless');
  }
  return ms;
}

const { times, medians: meds } = await sideBySide(variants, reps, once); // the first round warms the page cache
const ratio = meds[1] / meds[0];
console.log(
  `mocha clean suite (${parallel ? '--parallel' : 'serial'}), ${reps} repetitions, node ${process.version}, ${os.cpus().length} cores`,
);
variants.forEach((v, j) =>
  console.log(
    `  ${v.name.padEnd(34)} median ${meds[j].toFixed(0)} ms  [${times[j].map((t) => t.toFixed(0)).join(', ')}]`,
  ),
);
console.log(
  `  ratio guarded/unguarded: ${ratio.toFixed(2)} (target <= ${TARGET}) ${ratio <= TARGET ? 'ok' : 'OVER TARGET'}`,
);
process.exitCode = ratio <= TARGET ? 0 : 1;
