// `npm run demo`: runs every planted bug under mate-guard and shows that
// each one is caught and reported with the right kind. Steps live in
// examples/demo/*.mjs, one file per way of running (CLI, each runner).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const stepFiles = fs
  .readdirSync(path.join(here, 'demo'))
  .filter((f) => f.endsWith('.mjs'))
  .sort();

const results = [];
for (const file of stepFiles) {
  const { title, steps } = await import(pathToFileURL(path.join(here, 'demo', file)).href);
  console.log(`\n######## ${title}`);
  for (const step of steps) {
    const env = { ...process.env, FORCE_COLOR: '0', ...(step.env ?? {}) };
    for (const k of Object.keys(env)) if (k.startsWith('MATE_') && !(step.env && k in step.env)) delete env[k];
    console.log(`\n=== ${step.title}\n$ ${step.display ?? [step.command, ...step.args].join(' ')}`);
    const r = spawnSync(step.command, step.args, { cwd: step.cwd ?? root, env, encoding: 'utf8', maxBuffer: 64 << 20 });
    const output = (r.stdout ?? '') + (r.stderr ?? '');
    process.stdout.write(output);
    const code = r.status ?? 128 + (os.constants.signals[r.signal] ?? 0);
    const how = r.signal ? `killed by ${r.signal}` : `exit ${code}`;
    const problems = [];
    if (step.expect.exit === 'nonzero' && code === 0) problems.push('expected a non-zero exit');
    if (step.expect.exit === 0 && code !== 0) problems.push(`expected exit 0, got ${code}`);
    for (const text of step.expect.output ?? [])
      if (!output.includes(text)) problems.push(`expected output to contain ${JSON.stringify(text)}`);
    for (const text of step.expect.notOutput ?? [])
      if (output.includes(text)) problems.push(`expected output not to contain ${JSON.stringify(text)}`);
    results.push({ title: `${title}: ${step.title}`, how, problems });
  }
}

console.log('\n######## demo results');
for (const r of results)
  console.log(
    `${r.problems.length ? 'FAIL' : 'ok  '} ${r.title} (${r.how})${r.problems.length ? ' - ' + r.problems.join('; ') : ''}`,
  );
const failed = results.filter((r) => r.problems.length).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
