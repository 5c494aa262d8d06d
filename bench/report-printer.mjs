// The report printer a dying process waits for before it dies: Node's
// (dist/cli/print-report.js: node's start-up, symbolization, the run's
// suppressions, then the formatter) and the native one (mate-guard-print:
// the formatter alone), on the same recorded events, each on a fresh copy.
// Wall time per print, median of REPS (default 7):
//   node bench/report-printer.mjs [reps]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NODE_PRINTER = path.join(ROOT, 'packages', 'core-native', 'dist', 'cli', 'print-report.js');
const NATIVE_PRINTER = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'mate-guard-print');
const REPS = Number(process.argv[2] ?? 7);
const EVENTS = ['overflow', 'native-heap-overflow', 'death-free-bypassing-router', 'cuda-illegal-address'];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeOnce(cmd, args, event) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-bench-print-'));
  const file = path.join(dir, 'mate-guard-4242-1.json');
  fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'events', `${event}.json`), file);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, [...args, file], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0 || !r.stderr.includes('==mate-guard== ERROR:')) throw new Error(`${cmd} did not print ${event}: ${r.stderr}`);
  return ms;
}

console.log(`report printers, wall ms per print, median of ${REPS} (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'})`);
console.log('event'.padEnd(30) + 'node printer'.padStart(14) + 'mate-guard-print'.padStart(18) + 'ratio'.padStart(8));
for (const event of EVENTS) {
  const node = [];
  const native = [];
  for (let i = 0; i < REPS; i++) {
    node.push(timeOnce(process.execPath, [NODE_PRINTER], event));
    native.push(timeOnce(NATIVE_PRINTER, [], event));
  }
  const [n, m] = [median(node), median(native)];
  console.log(event.padEnd(30) + n.toFixed(1).padStart(14) + m.toFixed(1).padStart(18) + `${(n / m).toFixed(0)}x`.padStart(8));
}
