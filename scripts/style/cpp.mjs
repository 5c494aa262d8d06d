// C++ through clang-format as WebAssembly (@wasm-fmt/clang-format, pinned
// in the lock): the same formatter on every machine, no system package,
// so the check runs wherever npm install ran. Style: the repo's .clang-format.
import fs from 'node:fs';
import path from 'node:path';
import { format } from '@wasm-fmt/clang-format';
import { ROOT } from './files.mjs';

const style = fs.readFileSync(path.join(ROOT, '.clang-format'), 'utf8');

/** The file's text as clang-format writes it. */
export function formatCpp(file, text) {
  return format(text, file, style);
}
