// Why a report directory's file could not be read, in a few words: the
// reader names the file with it (a file is never skipped in silence).

/** `EACCES: permission denied`, `the file is empty`, `cut short (...)`, `not JSON (...)`. */
export function unreadableWhy(err: unknown, text?: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code) return `${code}: ${(err as Error).message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')}`;
  if (text !== undefined && text.trim() === '') return 'the file is empty';
  const msg = (err as Error).message;
  return /end of JSON input|Unterminated string/.test(msg) || endsAtTheEnd(msg, text)
    ? `cut short (${msg})`
    : `not JSON (${msg})`;
}

// A file cut after a comma or a key fails with "Expected double-quoted
// property name" (or the like) at its last byte: cut short too.
function endsAtTheEnd(msg: string, text?: string): boolean {
  const at = /at position (\d+)/.exec(msg);
  return at !== null && text !== undefined && Number(at[1]) >= text.trimEnd().length;
}
