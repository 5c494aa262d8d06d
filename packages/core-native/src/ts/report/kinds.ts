// GENERATED from the C++ list of report kinds (src/native/report/report_kind.h)
// by `npm run gen:kinds -w @mate-guard/core`; a test keeps them equal. Do not edit.
export const REPORT_KINDS = [
  'heap-buffer-overflow',
  'heap-buffer-underflow',
  'heap-use-after-free',
  'canary-corruption',
  'invalid-free',
  'double-free',
  'cross-stream-free',
  'illegal-address',
  'device-assert',
  'device-fault',
  'wild-access',
  'deadly-signal',
  'uncaught-exception',
  'out-of-memory',
] as const;

export type ReportKind = (typeof REPORT_KINDS)[number];
