// Every kind of violation, mirroring the C++ enum (crash/report_kind.h); a
// test keeps the two lists equal.
export const REPORT_KINDS = [
  'heap-buffer-overflow',
  'heap-buffer-underflow',
  'heap-use-after-free',
  'canary-corruption',
  'invalid-free',
  'double-free',
  'cross-stream-free',
  'illegal-address',
  'wild-access',
] as const;

export type ReportKind = (typeof REPORT_KINDS)[number];
