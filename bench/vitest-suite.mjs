// Wall time of a clean Vitest fixture suite, unguarded (`vitest run`, the
// plugin configured but off) vs guarded (`mate-vitest run --guard-alloc`),
// run alternately, several repetitions, medians and their ratio.
// Run: node bench/vitest-suite.mjs [--reps 7] [--suite clean|heavy]
//   clean: test/fixtures/vitest/clean (the integration tests' clean suite; target <= 1.3)
//   heavy: test/fixtures/vitest/heavy (20,000 buffers through the addon; for information)
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
const suite = arg('suite', 'clean');
const TARGET = 1.3;

const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
const mateVitest = path.join(root, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const cwd = path.join(root, 'test', 'fixtures', 'vitest', suite);

const env = { ...process.env, FORCE_COLOR: '0', CI: 'true' };
for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];

const variants = [
  { name: 'unguarded (vitest run)', args: [vitest, 'run'], guarded: false },
  { name: 'guarded (mate-vitest run --guard-alloc)', args: [mateVitest, 'run', '--guard-alloc'], guarded: true },
];

function once(v) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, v.args, { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`${v.name} failed with exit ${r.status}`);
  }
  const guardedSomething = /\[mate-guard\] summary: [1-9]\d* allocations? guarded/.test(r.stderr);
  if (v.guarded !== guardedSomething) {
    throw new Error(
      `${v.name}: expected ${v.guarded ? 'a summary with guarded allocations' : 'no guarding'}: the comparison would be meaningless`,
    );
  }
  return ms;
}

const { times, medians: meds } = await sideBySide(variants, reps, once); // the first round warms vite's caches
const ratio = meds[1] / meds[0];
console.log(`vitest ${suite} suite (forks pool), ${reps} repetitions`);
variants.forEach((v, j) =>
  console.log(
    `  ${v.name.padEnd(42)} median ${meds[j].toFixed(0)} ms  [${times[j].map((t) => t.toFixed(0)).join(', ')}]`,
  ),
);
if (suite === 'clean') {
  console.log(
    `  ratio guarded/unguarded: ${ratio.toFixed(2)} (target <= ${TARGET}) ${ratio <= TARGET ? 'ok' : 'OVER TARGET'}`,
  );
  process.exitCode = ratio <= TARGET ? 0 : 1;
} else {
  console.log(`  ratio guarded/unguarded: ${ratio.toFixed(2)} (for information)`);
}
