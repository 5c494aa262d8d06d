// Reports that are not memory bugs: an out-of-memory explains a failure
// the program was handed itself (PyTorch's OutOfMemoryError, a CUDA error
// code), with the guard's accounting. Printed like any report and counted
// apart; by itself it fails no run (a program may catch it and go on).
import type { ViolationEvent } from './event';
import type { ReportKind } from './kinds';

export const NOTICE_KINDS: readonly ReportKind[] = ['out-of-memory'];

export const isNotice = (e: Pick<ViolationEvent, 'kind'>): boolean => NOTICE_KINDS.includes(e.kind);
