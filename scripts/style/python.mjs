// Python through ruff as WebAssembly (@astral-sh/ruff-wasm-nodejs, pinned in
// the lock; no PyPI here): its formatter and its linter, with the repo's
// ruff.toml (what the ruff CLI reads too).
import fs from 'node:fs';
import path from 'node:path';
import { PositionEncoding, Workspace } from '@astral-sh/ruff-wasm-nodejs';
import { ROOT } from './files.mjs';
import { parseToml } from './toml.mjs';

const CONFIG = path.join(ROOT, 'ruff.toml');
// extend-exclude names files (scripts/style/files.mjs applies it); the rest is ruff's settings.
const { 'extend-exclude': _files, ...settings } = parseToml(fs.readFileSync(CONFIG, 'utf8'), 'ruff.toml');

let workspace;
function ruff() {
  workspace ??= new Workspace(settings, PositionEncoding.Utf16);
  return workspace;
}

/** The file's text as ruff format writes it. */
export function formatPython(text) {
  return ruff().format(text);
}

/** ruff check's findings in one file, as `file:line:col: CODE message` lines. */
export function lintPython(file, text) {
  return ruff()
    .check(text)
    .map((d) => `${file}:${d.start_location.row}:${d.start_location.column}: ${d.code ?? 'error'} ${d.message}`);
}
