// A violation as the process that found it wrote it (crash/report_event.cc):
// the one structured form every report is rendered from.
import type { NativeFrameRef, SymbolizedFrame } from '../symbolize/types';
import type { ReportKind } from './kinds';
import type { SuppressionVerdict } from './suppressions';

/** Addresses are hex strings (`0x7f...`): 64-bit values do not fit a JS number. */
type Hex = string;

export interface CanarySideDamage {
  bytes: number;
  /** Distance (1-based) of the damaged byte nearest to the data. */
  nearest: number;
  farthest: number;
}

/** Native frames: as captured (module + offset), symbolized once a report was rendered. */
export interface NativeStack {
  /** How the frames were found: `unwind-tables`, `frame-pointers`, `pc-only`. */
  unwind: string;
  frames: Array<NativeFrameRef & Partial<SymbolizedFrame>>;
}

export interface EventAllocation {
  id: number;
  size: number;
  start: Hex;
  end: Hex;
  mode: 'tail' | 'head';
  alignment: number;
  backend: string;
  guardMethod: string;
  slot: { data: [Hex, Hex]; guard: [Hex, Hex]; canaryBefore: [Hex, Hex]; canaryAfter: [Hex, Hex] };
  allocTest: string | null;
  allocStack: string | null;
  /** Native frames of the allocation (native-heap allocations). */
  allocFrames: NativeStack | null;
  freed: boolean;
  freedBy: 'gc' | 'explicit' | null;
  freeTest: string | null;
  freeStack: string | null;
  /** Native frames of the (first) free (native-heap allocations). */
  freeFrames: NativeStack | null;
}

export interface ViolationEvent {
  tool: 'mate-guard';
  version: number;
  kind: ReportKind;
  access: 'READ' | 'WRITE' | 'ACCESS' | null;
  address: Hex | null;
  relation: 'past-end' | 'before-start' | 'inside' | null;
  distance: number | null;
  /** The process died by `signal` after writing it. */
  fatal: boolean;
  signal: number | null;
  pid: number;
  test: string | null;
  /** The native frames of the bad access: a fault's thread, or a bad free's call. */
  accessStack?: NativeStack | null;
  damage: { before: CanarySideDamage; after: CanarySideDamage } | null;
  /** Who asked for the memory: `host` (JS buffers), `native-heap`, `cuda`. */
  backend?: string;
  /** Null for an invalid free of a pointer that is no allocation's. */
  allocation: EventAllocation | null;
  /** The process's counters when it was found (a process killed by a fault writes no others). */
  process: { allocations: number; peakLive: number; fallbacks: number };
  /**
   * Who was given it: `caller` when checkCanaries() returned it (a plugin
   * fails a test with it), `stderr` when its process printed it (at exit,
   * or the printer of a process a fault killed). Absent: not delivered yet.
   */
  delivered?: 'caller' | 'stderr';
  /** For canary damage: what the rerun in the faulting configuration found (the mate-* CLIs, guard-run). */
  rerun?: { mode: 'tail' | 'head'; alignment: number; fault: Omit<ViolationEvent, 'file'> | null };
  /** A run's suppressions matched it: counted, not failed (a fault still killed its process). */
  suppressed?: SuppressionVerdict;
  /** The rendered report, every line starting with `==mate-guard== `; absent until rendered. */
  text?: string;
  /** Where it was read from (set by the reader). */
  file?: string;
}

export function parseEvent(json: string): ViolationEvent {
  return JSON.parse(json) as ViolationEvent;
}
