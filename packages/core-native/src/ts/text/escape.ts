// Text that came from an artifact or a program under test (a record's
// command line, run.json's runner, a stats file's reason names, a JSON
// error's snippet) shown on a terminal: every character a terminal would
// obey (C0/C1 controls, escape sequences, line and paragraph separators,
// bidirectional overrides that reorder what is shown) is spelled out, so
// the screen shows what the file holds. The report formats escape their own
// fields (src/native/report/); this is for what the TS CLIs print.

/** Characters a terminal acts on or that change how the rest of a line reads. */
const OBEYED = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const code = (c: string): string => {
  const n = c.codePointAt(0)!;
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};

/** `text` with each character a terminal would obey shown as `\xNN` / `\uNNNN` (one line, whatever it holds). */
export function visible(text: string): string {
  return text.replace(OBEYED, code);
}

/** Whether `text` holds a character `visible` would spell out. */
export const hasObeyed = (text: string): boolean => new RegExp(OBEYED.source, 'u').test(text);

const SAFE_WORD = /^[\w@%+=:,./-]+$/;

/**
 * An argument exactly as a POSIX shell reads it back: bare when it is safe,
 * `'...'` otherwise, and bash's `$'...'` (every obeyed character and
 * backslash escaped, as UTF-8 bytes) when it holds one, so what is
 * printed is what runs.
 */
export function shellWord(arg: string): string {
  if (SAFE_WORD.test(arg)) return arg;
  if (!hasObeyed(arg)) return `'${arg.replace(/'/g, `'\\''`)}'`;
  // Each obeyed character as its UTF-8 bytes (`\xc2\x9b`): bash's `$'\x..'` is a byte, whatever the locale.
  const bytes = (c: string) => [...Buffer.from(c, 'utf8')].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
  return `$'${arg.replace(/[\\']/g, (c) => `\\${c}`).replace(OBEYED, bytes)}'`;
}

export const shellLine = (args: readonly string[]): string => args.map(shellWord).join(' ');
