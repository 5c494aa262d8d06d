// Reports that are not memory bugs: an out-of-memory explains a failure
// the program was handed itself (PyTorch's OutOfMemoryError, a CUDA error
// code), with the guard's accounting. Printed like any report and counted
// apart; by itself it fails no run (a program may catch it and go on).
// A death outside guarded memory (a fault on memory mate-guard did not
// hand out, an abort, an uncaught C++ exception) is the program's own: its
// own exit status tells (a test may fork a child to watch it die), so it
// is not counted as a violation either. A death on guarded memory (a free
// of a guarded pointer that bypassed the router, a misaligned access
// inside a guarded allocation) names its allocation and stays one.
import type { ViolationEvent } from './event';
import type { ReportKind } from './kinds';

export const NOTICE_KINDS: readonly ReportKind[] = ['out-of-memory'];

type Noticed = Pick<ViolationEvent, 'kind'> & Partial<Pick<ViolationEvent, 'death' | 'allocation'>>;

/** A deadly-signal or uncaught-exception report that names no guarded allocation. */
export const isDeathOutsideGuardedMemory = (e: Noticed): boolean =>
  e.death !== undefined && e.death !== null && !e.allocation;

export const isNotice = (e: Pick<ViolationEvent, 'kind'>): boolean => NOTICE_KINDS.includes(e.kind);

/** Reports that fail no run by themselves: notices and deaths outside guarded memory. */
export const notCountedAsViolation = (e: Noticed): boolean => isNotice(e) || isDeathOutsideGuardedMemory(e);
