// Wall time of the clean Jest fixture suite, guarded vs unguarded, with each
// launcher: plain `jest` (guarding through MATE_JEST_GUARD_ALLOC) and the
// `mate-jest` watcher (`--guard-alloc`). All four variants alternate inside
// each repetition; medians and ratios. The target applies to guarded vs
// unguarded with the same launcher; the cross ratio (mate-jest guarded vs
// plain jest) is printed too: it adds the watcher's own process start.
// Run: node bench/jest-suite.mjs [--reps 7] [--workers 1]
// --workers 1 runs in band (Jest's default on 2 cores); N > 1 uses workers.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { sideBySide } from './lib/side-by-side.mjs';

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
const common = [
  '-c',
  config,
  '--ci',
  '--silent',
  ...(workers > 1 ? ['-w', String(workers), '--workerIdleMemoryLimit=1GB'] : ['-i']),
];

const env = { ...process.env, FORCE_COLOR: '0' };
for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];

const variants = [
  { name: 'jest, unguarded', args: [jest, ...common] },
  {
    name: 'jest, MATE_JEST_GUARD_ALLOC=1',
    args: [jest, ...common],
    env: { MATE_JEST_GUARD_ALLOC: '1' },
    guarded: true,
  },
  { name: 'mate-jest, unguarded', args: [mateJest, ...common] },
  { name: 'mate-jest --guard-alloc', args: [mateJest, '--guard-alloc', ...common], guarded: true },
];

function once(v) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, v.args, { cwd: root, env: { ...env, ...v.env }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`${v.name} failed with exit ${r.status}`);
  }
  // Proof that guarding was on (plain jest prints no summary line).
  if (v.guarded && v.args[0] === mateJest && !/\[mate-guard\] summary: [1-9]\d* allocations guarded/.test(r.stderr)) {
    throw new Error(`${v.name} guarded nothing: the comparison would be meaningless`);
  }
  return ms;
}

const { times, medians: meds } = await sideBySide(variants, reps, once); // the first round warms Jest's caches
const ratio = (a, b) => meds[a] / meds[b];
const checks = [
  { name: 'jest: guarded / unguarded', r: ratio(1, 0), target: true },
  { name: 'mate-jest: guarded / unguarded', r: ratio(3, 2), target: true },
  { name: 'mate-jest guarded / plain jest unguarded', r: ratio(3, 0), target: false },
];
console.log(`jest clean suite (${workers > 1 ? `${workers} workers` : 'in band'}), ${reps} repetitions, wall time`);
variants.forEach((v, j) =>
  console.log(
    `  ${v.name.padEnd(32)} median ${meds[j].toFixed(0).padStart(5)} ms  [${times[j].map((t) => t.toFixed(0)).join(', ')}]`,
  ),
);
for (const c of checks) {
  const verdict = c.target
    ? c.r <= TARGET
      ? `ok (target <= ${TARGET})`
      : `OVER TARGET (${TARGET})`
    : '(watcher start included; no target)';
  console.log(`  ${c.name.padEnd(42)} ${c.r.toFixed(2)} ${verdict}`);
}
process.exitCode = checks.every((c) => !c.target || c.r <= TARGET) ? 0 : 1;
