'use strict';
// Writes src/ts/report/kinds.ts from the one list of report kinds, the
// C++ X-macro in src/native/report/report_kind.h: `npm run gen:kinds`.
// A unit test keeps the committed file equal to what this generates.
const fs = require('node:fs');
const path = require('node:path');

const HEADER = path.join(__dirname, '..', 'src', 'native', 'report', 'report_kind.h');
const OUT = path.join(__dirname, '..', 'src', 'ts', 'report', 'kinds.ts');

/** kinds.ts for the X(kId, "name") entries of MATE_REPORT_KINDS in `header`. */
function kindsTs(header) {
  const macro = /#define MATE_REPORT_KINDS\(X\)([\s\S]*?)\n\n/.exec(header);
  if (!macro) throw new Error(`${HEADER}: no MATE_REPORT_KINDS(X) list`);
  const names = [...macro[1].matchAll(/X\(\s*k\w+\s*,\s*"([a-z-]+)"\s*\)/g)].map((m) => m[1]);
  return [
    '// GENERATED from the C++ list of report kinds (src/native/report/report_kind.h)',
    '// by `npm run gen:kinds -w @mate-guard/core`; a test keeps them equal. Do not edit.',
    'export const REPORT_KINDS = [',
    ...names.map((n) => `  '${n}',`),
    '] as const;',
    '',
    'export type ReportKind = (typeof REPORT_KINDS)[number];',
    '',
  ].join('\n');
}

module.exports = { kindsTs, HEADER, OUT };

if (require.main === module) fs.writeFileSync(OUT, kindsTs(fs.readFileSync(HEADER, 'utf8')));
