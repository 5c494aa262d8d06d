#!/usr/bin/env node
// `npm run format` (--write) and `npm run format:check` (--check, run by the
// quick tier): C++ (clang-format), TypeScript/JavaScript (Biome) and Python
// (ruff), each from npm and pinned in the lock, so every machine formats
// alike. Given paths, only those (each tool's ignore list still applies).
//   node scripts/format.mjs --write|--check [file...]
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { openCache } from './style/cache.mjs';
import { formatCpp } from './style/cpp.mjs';
import { ROOT } from './style/files.mjs';
import { filesToDo } from './style/given.mjs';
import { biome } from './style/js.mjs';
import { formatPython } from './style/python.mjs';

const [mode, ...given] = process.argv.slice(2);
if (mode !== '--write' && mode !== '--check') {
  console.error(`error: unknown mode ${JSON.stringify(mode ?? '')}: use --write or --check, then optional paths`);
  process.exit(2);
}
const write = mode === '--write';

const FORMAT = { cpp: formatCpp, python: (_file, text) => formatPython(text) };
const version = (pkg) => createRequire(import.meta.url)(`${pkg}/package.json`).version;
const cache = openCache(
  [
    version('@wasm-fmt/clang-format'),
    version('@astral-sh/ruff-wasm-nodejs'),
    ...['.clang-format', 'ruff.toml'].map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8')),
  ].join('\0'),
  given.length === 0,
);

/** Formats one file in-process; whether it was not formatted. */
function formatFile(lang, file) {
  const full = path.resolve(ROOT, file);
  const text = fs.readFileSync(full, 'utf8');
  if (cache.has(lang, text)) return false;
  const out = FORMAT[lang](file, text);
  cache.add(lang, out);
  if (out === text) return false;
  if (write) fs.writeFileSync(full, out);
  return true;
}

const files = filesToDo(given);
const unformatted = [];
for (const lang of ['cpp', 'python']) unformatted.push(...files[lang].filter((f) => formatFile(lang, f)));
// Biome over all its files at once (a process per file would take long).
const js = biome('format', [], files.js).files;
if (write && js.length) biome('format', ['--write'], js);
unformatted.push(...js);
cache.save();

if (write) {
  console.log(
    unformatted.length
      ? `formatted ${unformatted.length} file(s):\n  ${unformatted.join('\n  ')}`
      : 'all files were formatted already',
  );
} else if (unformatted.length) {
  console.error(
    `error: ${unformatted.length} file(s) not formatted (npm run format writes them):\n  ${unformatted.join('\n  ')}`,
  );
  process.exit(1);
}
