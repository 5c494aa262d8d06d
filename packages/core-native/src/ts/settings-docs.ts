// The runner settings table as README markdown: the docs come from the same
// rows as the parser (a test keeps README.md equal to this output).
import { GUARD_MODES, SETTINGS } from './settings';

export function settingsMarkdown(): string {
  const lines = [
    '| flag | environment (`<RUNNER>` = VITEST, JEST, MOCHA) | Jest `testEnvironmentOptions` | Mocha rc key | default | meaning |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of SETTINGS) {
    const flag = row.kind === 'boolean'
      ? `\`--${row.flag}\`${row.negatable ? `, \`--no-${row.flag}\`` : ''}`
      : `\`--${row.flag} <${GUARD_MODES.join('\\|')}>\``;
    lines.push(`| ${flag} | \`MATE_<RUNNER>_${row.env}\` | \`${row.option}\` | \`${row.flag}\` | \`${String(row.default)}\` | ${row.description} |`);
  }
  return lines.join('\n') + '\n';
}
