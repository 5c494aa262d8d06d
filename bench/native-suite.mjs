// A real addon's own test suite with its native heap guarded: wall time of
// the whole command, alternating variants, medians; pass/fail counts (mocha
// style "N passing / N failing" lines) and guarded native allocations.
//   node bench/native-suite.mjs --dir <checkout> --glob '<glob>' [--sample 10] [--reps 3] -- <command...>
// e.g. a better-sqlite3 checkout built from source, outside this repository:
//   node bench/native-suite.mjs --dir /tmp/bsq/package --glob '*better_sqlite3.node' -- npx mocha --exit --timeout=5000

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { runToFile } from './lib/run-to-file.mjs';
import { median } from './lib/side-by-side.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MATE = path.join(here, '..', 'packages', 'core-native', 'bin', 'mate.js');
const STATS = path.join(here, 'lib', 'print-native-stats.cjs');
const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
const opts = argv.slice(0, sep < 0 ? argv.length : sep);
const command = sep < 0 ? [] : argv.slice(sep + 1);
const arg = (name, def) => {
  const i = opts.indexOf(`--${name}`);
  return i >= 0 ? opts[i + 1] : def;
};
const dir = arg('dir');
const glob = arg('glob');
const sample = arg('sample', '10');
const reps = Number(arg('reps', 3));
if (!dir || !glob || command.length === 0) {
  console.error(
    "usage: node bench/native-suite.mjs --dir <checkout> --glob '<glob>' [--sample N] [--reps N] -- <command...>",
  );
  process.exit(2);
}

const VARIANTS = {
  plain: command,
  'guard-run (JS buffers)': [process.execPath, MATE, 'guard-run', '--', ...command],
  'guard-run --native': [process.execPath, MATE, 'guard-run', '--native', glob, '--', ...command],
  [`--native, sample 1/${sample}`]: [
    process.execPath,
    MATE,
    'guard-run',
    '--native',
    glob,
    '--native-sample-rate',
    sample,
    '--',
    ...command,
  ],
};

// Output goes to a file, not a pipe: a process the suite leaves behind
// (a forked child whose parent timed out) must not hold the run open.
const outFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-native-suite-')), 'out.txt');

function once(cmd) {
  const env = { ...process.env, NODE_OPTIONS: `--require ${JSON.stringify(STATS)}` };
  const { status, ms, out } = runToFile(cmd, { cwd: dir, env, outFile });
  const count = (re) => Number(re.exec(out)?.[1] ?? 0);
  let native = 0;
  for (const m of out.matchAll(/\[native-stats\] (.+)/g)) native += JSON.parse(m[1]).native;
  const failed = [...out.matchAll(/^ {2}\d+\) (.+)$/gm)].map((m) => m[1]);
  return { ms, status, passing: count(/(\d+) passing/), failing: count(/(\d+) failing/), native, failed };
}

const names = Object.keys(VARIANTS);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < reps; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + i) % names.length];
    runs[name].push(once(VARIANTS[name]));
  }
}
const base = median(runs.plain.map((r) => r.ms));
console.log(`${command.join(' ')} in ${dir}, node ${process.version}, ${reps} repetitions, median wall time`);
console.log('| variant | wall | ratio | passing (each run) | failing (each run) | guarded native allocations |');
console.log('|---|---|---|---|---|---|');
for (const name of names) {
  const rs = runs[name];
  const ms = median(rs.map((r) => r.ms));
  const passing = rs.map((r) => r.passing).join('/');
  const failing = rs.map((r) => r.failing).join('/');
  console.log(
    `| ${name} | ${(ms / 1000).toFixed(2)} s | ${(ms / base).toFixed(2)}x | ${passing} | ${failing} | ${name.includes('native') ? median(rs.map((r) => r.native)) : '-'} |`,
  );
}
for (const name of names) {
  for (const r of runs[name]) for (const f of r.failed) console.log(`failed in "${name}": ${f}`);
}
