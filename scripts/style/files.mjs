// Which files each formatter owns: the repository's files (tracked, and new
// ones git does not ignore) by language, less what each tool's ignore list
// in the repo names. test/fixtures/** is left as written everywhere: its
// files are inputs whose text and line numbers tests and reports pin.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseToml } from './toml.mjs';

// (import.meta.dirname needs Node 20.11; the engines floor is 20.)
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const LANGUAGES = {
  cpp: ['.cc', '.h', '.c', '.cpp', '.hpp', '.cu', '.cuh'],
  python: ['.py'],
  js: ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'],
};

/** The language a path is formatted as, or null (not ours: markdown, JSON, .inc tables...). */
export function languageOf(file) {
  const ext = path.extname(file);
  for (const [lang, exts] of Object.entries(LANGUAGES)) if (exts.includes(ext)) return lang;
  return null;
}

function repoFiles() {
  let out;
  try {
    out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
  } catch (e) {
    throw new Error(`cannot list the repository's files with git (${e.message.split('\n')[0]}): run in a git checkout`);
  }
  // A deleted but still tracked file is listed by --cached: only what exists.
  return out.split('\0').filter((f) => f && fs.existsSync(path.join(ROOT, f)));
}

/** .clang-format-ignore's patterns (clang-format's own file: one glob a line, # comments). */
function cppIgnored() {
  return fs
    .readFileSync(path.join(ROOT, '.clang-format-ignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** biome.json's negated `files.includes` (`!glob`): what Biome leaves alone. */
function jsIgnored() {
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'biome.json'), 'utf8'));
  return config.files.includes.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
}

/** ruff.toml's extend-exclude. */
function pythonIgnored() {
  return parseToml(fs.readFileSync(path.join(ROOT, 'ruff.toml'), 'utf8'), 'ruff.toml')['extend-exclude'] ?? [];
}

const IGNORED = { cpp: cppIgnored, python: pythonIgnored, js: jsIgnored };

/** Whether a repository-relative path is one its language's formatter leaves alone (the tool's ignore list). */
export function isIgnored(lang, file) {
  return IGNORED[lang]().some((p) => matchesGlob(file, p));
}

/**
 * Whether a repository-relative path matches a glob of the ignore files:
 * `**` any folders, `*` any characters within one name; a pattern naming a
 * folder covers what is under it.
 */
export function matchesGlob(file, pattern) {
  const re = pattern
    .replace(/\/+$/, '')
    .split(/(\*\*\/?|\*)/)
    .map((part) =>
      part.startsWith('**')
        ? '(?:.*/)?' + (part === '**' ? '.*' : '')
        : part === '*'
          ? '[^/]*'
          : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${re}(?:/.*)?$`).test(file);
}

/** Repository-relative paths of one language that its formatter owns. */
export function filesOf(lang) {
  const patterns = IGNORED[lang]();
  return repoFiles().filter((f) => languageOf(f) === lang && !patterns.some((p) => matchesGlob(f, p)));
}
