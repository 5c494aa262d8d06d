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

/**
 * `wholeTree`: the run sees every file, so what it saves is only the texts
 * it met (the cache never grows past the tree); else it adds to the rest.
 */
export function openCache(configKey, wholeTree) {
  let known = new Set();
  const seen = new Set();
  const key = hash(configKey);
  try {
    const saved = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    if (saved.key === key) known = new Set(saved.formatted);
  } catch {
    // none yet, or unreadable: start empty (it only saves time)
  }
  return {
    has(lang, text) {
      const h = hash(lang, text);
      if (known.has(h)) seen.add(h);
      return known.has(h);
    },
    add: (lang, text) => seen.add(hash(lang, text)),
    save() {
      const formatted = wholeTree ? seen : new Set([...known, ...seen]);
      const tmp = `${FILE}.${process.pid}`;
      try {
        fs.mkdirSync(path.dirname(FILE), { recursive: true });
        fs.writeFileSync(tmp, JSON.stringify({ key, formatted: [...formatted] }));
        fs.renameSync(tmp, FILE); // whole, even with two checks at once
      } catch {
        // node_modules not writable: no cache, the next check formats all again
        fs.rmSync(tmp, { force: true });
      }
    },
  };
}
