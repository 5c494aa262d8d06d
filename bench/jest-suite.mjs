// Wall time of the clean Jest fixture suite, unguarded (`jest`, the guard
// environment configured but off) vs guarded (`mate-jest --guard-alloc`),
// run alternately, several repetitions, medians and their ratio.
// Run: node bench/jest-suite.mjs [--reps 7] [--workers 1]
// --workers 1 runs in band (Jest's default on 2 cores); N > 1 uses workers.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const reps = Number(arg('reps', 7));
const workers = Number(arg('workers', 1));
const TARGET = 1.3;

const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const mateJest = path.join(root, 'packages', 'jest-env', 'bin', 'mate-jest.js');
const config = path.join(root, 'test', 'fixtures', 'jest', 'clean', 'jest.config.js');
const common = ['-c', config, '--ci', '--silent', ...(workers > 1 ? ['-w', String(workers), '--workerIdleMemoryLimit=1GB'] : ['-i'])];

const env = { ...process.env, FORCE_COLOR: '0' };
for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];

const variants = [
  { name: 'unguarded (jest)', args: [jest, ...common] },
  { name: 'guarded (mate-jest --guard-alloc)', args: [mateJest, '--guard-alloc', ...common] },
];

function once(v) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, v.args, { cwd: root, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`${v.name} failed with exit ${r.status}`);
  }
  if (v.args[0] === mateJest && !/\[mate-guard\] summary: [1-9]\d* allocations guarded/.test(r.stderr)) {
    throw new Error('the guarded run guarded nothing: the comparison would be meaningless');
  }
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (const v of variants) once(v); // warm Jest's transform cache and the OS page cache
const times = variants.map(() => []);
for (let i = 0; i < reps; i++) {
  // Alternate the order so drift on a noisy machine hits both sides.
  const order = i % 2 ? [1, 0] : [0, 1];
  for (const j of order) times[j].push(once(variants[j]));
}
const meds = times.map(median);
const ratio = meds[1] / meds[0];
console.log(`jest clean suite (${workers > 1 ? `${workers} workers` : 'in band'}), ${reps} repetitions`);
variants.forEach((v, j) => console.log(`  ${v.name.padEnd(36)} median ${meds[j].toFixed(0)} ms  [${times[j].map((t) => t.toFixed(0)).join(', ')}]`));
console.log(`  ratio guarded/unguarded: ${ratio.toFixed(2)} (target <= ${TARGET}) ${ratio <= TARGET ? 'ok' : 'OVER TARGET'}`);
process.exitCode = ratio <= TARGET ? 0 : 1;
