#!/usr/bin/env node
// `npm run lint` (run by the quick tier): Biome's linter over TypeScript and
// JavaScript (biome.json: unused code, `any`, floating promises...) and
// ruff's over Python (ruff.toml: pyflakes and pycodestyle's errors).
// Exits 1 listing each finding as file:line: rule message.
//   node scripts/lint.mjs [file...]
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './style/files.mjs';
import { filesToDo } from './style/given.mjs';
import { biome } from './style/js.mjs';
import { lintPython } from './style/python.mjs';

const files = filesToDo(process.argv.slice(2));
const findings = biome('lint', ['--error-on-warnings'], files.js).findings;
for (const file of files.python) findings.push(...lintPython(file, fs.readFileSync(path.resolve(ROOT, file), 'utf8')));

if (findings.length) {
  const named = new Set(findings.map((f) => f.slice(0, f.indexOf(':'))));
  console.error(`${findings.join('\n')}\nerror: lint found ${findings.length} problem(s) in ${named.size} file(s)`);
  process.exit(1);
}
