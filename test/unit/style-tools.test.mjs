// The formatters and linters (scripts/format.mjs, scripts/lint.mjs): C++
// through clang-format, TypeScript/JavaScript through Biome, Python through
// ruff, all from npm. A check names each file or finding and fails; --write
// leaves the file as the check wants it; test fixtures are never touched.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { ROOT, run } from '../helpers/run.mjs';

const FORMAT = path.join(ROOT, 'scripts', 'format.mjs');
const LINT = path.join(ROOT, 'scripts', 'lint.mjs');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-style-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Files written under a fresh folder: { name: text } -> their paths. */
function files(dir, texts) {
  fs.mkdirSync(path.join(tmp, dir));
  return Object.entries(texts).map(([name, text]) => {
    const file = path.join(tmp, dir, name);
    fs.writeFileSync(file, text);
    return file;
  });
}

const UNFORMATTED = {
  'bad.cc': 'int   f( int x ){return x;}\n',
  'bad.py': 'x  =  {"a":1}\n',
  'bad.mts': 'const  x = "a"\nexport { x }\n',
};
const FORMATTED = {
  'bad.cc': 'int f(int x) { return x; }\n',
  'bad.py': "x = {'a': 1}\n",
  'bad.mts': "const x = 'a';\nexport { x };\n",
};

test('format --check fails naming each unformatted file, C++, Python and TypeScript, and changes none', async () => {
  const paths = files('check', UNFORMATTED);
  const r = await run(process.execPath, [FORMAT, '--check', ...paths]);
  assert.equal(r.code, 1, r.output);
  assert.match(r.stderr, /^error: 3 file\(s\) not formatted \(npm run format writes them\):$/m);
  for (const p of paths) assert.ok(r.stderr.includes(path.relative(ROOT, p)), `${p} not named:\n${r.stderr}`);
  for (const p of paths) assert.equal(fs.readFileSync(p, 'utf8'), UNFORMATTED[path.basename(p)]);
});

test('format --write rewrites each file in the repo style (spacing, single quotes, semicolons), after which --check passes', async () => {
  const paths = files('write', UNFORMATTED);
  const w = await run(process.execPath, [FORMAT, '--write', ...paths]);
  assert.equal(w.code, 0, w.output);
  assert.match(w.stdout, /^formatted 3 file\(s\):$/m);
  for (const p of paths) assert.equal(fs.readFileSync(p, 'utf8'), FORMATTED[path.basename(p)], p);
  const c = await run(process.execPath, [FORMAT, '--check', ...paths]);
  assert.equal(c.code, 0, c.output);
});

test('test fixtures are left as written (their text and line numbers are what tests pin), though the same files elsewhere would be formatted', async () => {
  const fixture = path.join(ROOT, 'test', 'fixtures', 'native-heap');
  const given = fs
    .readdirSync(fixture)
    .filter((f) => /\.(cc|c|cjs|js|mjs|py)$/.test(f))
    .map((f) => path.join(fixture, f));
  const copies = files(
    'fixtures',
    Object.fromEntries(given.map((f) => [path.basename(f), fs.readFileSync(f, 'utf8')])),
  );
  const elsewhere = await run(process.execPath, [FORMAT, '--check', ...copies]);
  assert.equal(elsewhere.code, 1, `no unformatted fixture to prove the exclusion with:\n${elsewhere.output}`);
  const inPlace = await run(process.execPath, [FORMAT, '--check', ...given]);
  assert.equal(inPlace.code, 0, inPlace.output);
});

test('lint names each finding as file:line: rule (an unused variable in TS, an unused import in Python, an explicit any)', async () => {
  const paths = files('lint', {
    'unused.ts': 'const unused = 1;\nexport function f(a: any): number {\n  return a;\n}\n',
    'unused.py': 'import os\n',
  });
  const r = await run(process.execPath, [LINT, ...paths]);
  assert.equal(r.code, 1, r.output);
  const [ts, py] = paths.map((p) => path.relative(ROOT, p));
  assert.match(r.stderr, new RegExp(`^${ts}:1: lint/correctness/noUnusedVariables `, 'm'));
  assert.match(r.stderr, new RegExp(`^${ts}:2: lint/suspicious/noExplicitAny `, 'm'));
  assert.match(r.stderr, new RegExp(`^${py}:1:8: F401 \`os\` imported but unused$`, 'm'));
  assert.match(r.stderr, /^error: lint found 3 problem\(s\) in 2 file\(s\)$/m);
});

test('format refuses an unknown mode and a missing file, naming them', async () => {
  const mode = await run(process.execPath, [FORMAT, '--chek']);
  assert.equal(mode.code, 2);
  assert.match(mode.stderr, /^error: unknown mode "--chek": use --write or --check, then optional paths$/m);
  const missing = await run(process.execPath, [FORMAT, '--check', path.join(tmp, 'nowhere.cc')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nowhere\.cc: no such file$/m);
});

test('the repository is linted clean (npm run lint)', async () => {
  const r = await run(process.execPath, [LINT]);
  assert.equal(r.code, 0, r.output);
});

test('every C++, TypeScript/JavaScript and Python file of the repository is formatted (npm run format:check)', async () => {
  const r = await run(process.execPath, [FORMAT, '--check']);
  assert.equal(r.code, 0, r.output);
});
