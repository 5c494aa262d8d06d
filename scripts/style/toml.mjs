// The subset of TOML that ruff.toml uses: [tables], key = value with
// strings, numbers, booleans and one-line arrays of those. The Python
// formatter runs as WebAssembly with no file access, so its settings are
// read here; anything outside the subset is an error, never a guess.
export function parseToml(text, file) {
  const root = {};
  let table = root;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\s+#[^"']*$/, '').trim();
    if (!line || line.startsWith('#')) return;
    const fail = (why) => {
      throw new Error(
        `${file}:${i + 1}: ${why} (the subset read here: [table], key = string, number, boolean or a one-line array)`,
      );
    };
    const header = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line);
    if (header) {
      table = root;
      for (const key of header[1].split('.')) table = table[key] ??= {};
      return;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (!pair) fail(`not a table header or key = value: ${line}`);
    table[pair[1]] = value(pair[2], fail);
  });
  return root;
}

function value(text, fail) {
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) fail(`an array must close on its line: ${text}`);
    const inner = text.slice(1, -1).trim().replace(/,$/, '');
    return inner ? inner.split(',').map((v) => value(v.trim(), fail)) : [];
  }
  const str = /^"([^"\\]*)"$|^'([^']*)'$/.exec(text);
  if (str) return str[1] ?? str[2];
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+$/.test(text)) return Number(text);
  return fail(`unsupported value: ${text}`);
}
