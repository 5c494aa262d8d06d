// The texts already known to be formatted (by hash, per tool and config),
// so the quick tier re-checks only what changed: clang-format as
// WebAssembly takes seconds for the whole tree. Kept under node_modules/.cache;
// a different config or tool version starts a fresh set.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './files.mjs';

const FILE = path.join(ROOT, 'node_modules', '.cache', 'mate-guard-format.json');
const hash = (...parts) => crypto.createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);

export function openCache(configKey) {
  let known = new Set();
  const key = hash(configKey);
  try {
    const saved = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    if (saved.key === key) known = new Set(saved.formatted);
  } catch {
    // none yet, or unreadable: start empty (it only saves time)
  }
  return {
    has: (lang, text) => known.has(hash(lang, text)),
    add: (lang, text) => known.add(hash(lang, text)),
    save() {
      fs.mkdirSync(path.dirname(FILE), { recursive: true });
      const tmp = `${FILE}.${process.pid}`;
      fs.writeFileSync(tmp, JSON.stringify({ key, formatted: [...known] }));
      fs.renameSync(tmp, FILE); // whole, even with two checks at once
    },
  };
}
