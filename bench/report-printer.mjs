// The report printer a dying process starts and waits for before it dies
// (mate-guard-print: the run's suppressions matched, frames symbolized where
// not yet, the formatter, earlier reports where the process owns its run),
// on recorded events (test/fixtures/events), each print on a fresh copy, in
// three settings: the event alone; its run has a suppressions file (three
// rules, the last one matching); and --with-earlier, one earlier report of
// the same process to show first. Wall ms per print, median of REPS.
// `--node-printer <print-report.js>` times an older build's Node printer
// (the one a dying process started for the last two settings before issue
// 49) side by side.
//   node bench/report-printer.mjs [reps] [--node-printer <path>]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NATIVE_PRINTER = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'mate-guard-print');
const args = process.argv.slice(2);
const at = args.indexOf('--node-printer');
const NODE_PRINTER = at >= 0 ? path.resolve(args.splice(at, 2)[1]) : undefined;
const REPS = Number(args[0] ?? 7);
const EVENTS = ['overflow', 'native-heap-overflow', 'death-free-bypassing-router', 'cuda-illegal-address'];
const SETTINGS = ['alone', 'suppressions', 'with earlier'];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fixture = (name) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'events', `${name}.json`), 'utf8'));

/** A report folder holding the event (and what the setting adds); the event file's path. */
function folder(event, setting) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-bench-print-'));
  const e = { ...fixture(event), pid: 4242, fatal: true, test: 'bench.test.js > dies' };
  delete e.text;
  delete e.delivered;
  const file = path.join(dir, 'mate-guard-4242-2.json');
  fs.writeFileSync(file, JSON.stringify(e));
  if (setting !== 'alone') {
    const supp = path.join(dir, 'known.supp');
    fs.writeFileSync(supp, `canary-corruption function=NoSuchFunction\n* module=*/no-such.node\n${e.kind} test=*\n`);
    fs.writeFileSync(
      path.join(dir, 'run.json'),
      JSON.stringify({ tool: 'mate-guard', pid: 1, suppressions: setting === 'suppressions' ? supp : null }),
    );
  }
  if (setting === 'with earlier') {
    const earlier = { ...fixture('underflow'), pid: 4242, fatal: false, delivered: 'caller' };
    fs.writeFileSync(path.join(dir, 'mate-guard-4242-1.json'), JSON.stringify(earlier));
  }
  return { dir, file };
}

function timeOnce(cmd, pre, event, setting) {
  const { dir, file } = folder(event, setting);
  const argv = [...pre, file, ...(setting === 'with earlier' ? ['--with-earlier'] : [])];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0 || !r.stderr.includes('==mate-guard== ERROR:'))
    throw new Error(`${cmd} did not print ${event} (${setting}): ${r.stderr}`);
  if (setting === 'suppressions' && !r.stderr.includes('==mate-guard== suppressed by '))
    throw new Error(`${cmd} did not match the suppression for ${event}`);
  if (setting === 'with earlier' && !r.stderr.includes('gave its test runner a report'))
    throw new Error(`${cmd} did not show the earlier report for ${event}`);
  return ms;
}

console.log(
  `report printer, wall ms per print, median of ${REPS} (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, load ${os.loadavg()[0].toFixed(1)})`,
);
console.log(
  'event'.padEnd(30) +
    'setting'.padEnd(15) +
    'mate-guard-print'.padStart(18) +
    (NODE_PRINTER ? 'node printer'.padStart(14) + 'ratio'.padStart(8) : ''),
);
for (const event of EVENTS) {
  for (const setting of SETTINGS) {
    const native = [];
    const node = [];
    for (let i = 0; i < REPS; i++) {
      native.push(timeOnce(NATIVE_PRINTER, [], event, setting));
      if (NODE_PRINTER) node.push(timeOnce(process.execPath, [NODE_PRINTER], event, setting));
    }
    const m = median(native);
    const n = NODE_PRINTER ? median(node) : undefined;
    console.log(
      event.padEnd(30) +
        setting.padEnd(15) +
        m.toFixed(1).padStart(18) +
        (n ? n.toFixed(1).padStart(14) + `${(n / m).toFixed(0)}x`.padStart(8) : ''),
    );
  }
}
