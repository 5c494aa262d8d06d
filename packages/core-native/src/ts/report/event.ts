// A violation as the process that found it wrote it (report/report_event.cc):
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

/** A kernel parameter that pointed into a guarded device allocation. */
export interface DeviceLaunchArg {
  /** Parameter index, and the pointer's byte offset inside the parameter (structs hold pointers too). */
  param: number;
  offset: number;
  /** The parameter's size in bytes: more than 8, a struct passed by value (absent in older events). */
  paramSize?: number;
  value: Hex;
  allocation: EventAllocation;
}

/** A kernel launch the device guard tracked (CUPTI). */
export interface DeviceLaunch {
  /** Launch number, process-wide. */
  number: number;
  /** The kernel's name as the driver knows it (C++ kernels mangled). */
  kernel: string | null;
  stream: Hex;
  /** JS or Python stack of the call that launched it (V8-style lines). */
  site: string | null;
  test: string | null;
  /** Launch blocking: its own synchronize returned the fault. */
  faulted: boolean;
  /** Guarded pointers among its parameters (`args` holds the first few). */
  argCount: number;
  args: DeviceLaunchArg[];
  /**
   * dumpInputs: the guarded allocations its arguments pointed into, saved
   * before it ran (files relative to the report directory; index in
   * inputs/index-<pid>.jsonl).
   */
  inputs?: DeviceLaunchInput[];
}

/** An allocation saved before a launch (--guard-dump-inputs). */
export interface DeviceLaunchInput {
  /** The first parameter that pointed into it. */
  param: number;
  allocation: number;
  size: number;
  /** Bytes saved: fewer than `size` when truncated at the per-allocation cap. */
  saved: number;
  /** `inputs/<pid>-<launch>-<k>.bin`, relative to the report directory. */
  file: string;
}

/** deadly-signal and uncaught-exception: the signal as the kernel described it, and what mate-guard could tell. */
export interface DeathInfo {
  signal: number;
  /** si_code: the kernel's reason (> 0) or how a process sent it (<= 0: SI_USER 0, SI_TKILL -6, ...). */
  code: number;
  /** The process that sent it (kill, raise, abort); null when the kernel raised it. */
  sender: number | null;
  /** The faulting address (SIGSEGV, SIGBUS) or instruction (SIGILL, SIGFPE, SIGTRAP). */
  address: Hex | null;
  access: 'READ' | 'WRITE' | 'ACCESS' | null;
  /** glibc's message before it aborted (`free(): invalid pointer`). */
  abortMessage: string | null;
  /** The uncaught C++ exception std::terminate ran for. */
  exception: { type: string; what: string | null } | null;
  /**
   * The dying stack passes through free()/realloc() (access-stack frame
   * `frame`) with a pointer into guarded memory: a free mate-guard's router
   * did not see. The event's allocation is the one it points into.
   */
  guardedFree: { function: string; frame: number; pointer: Hex } | null;
  /**
   * A general-protection fault of an instruction that needs an aligned
   * memory operand (movdqa, vmovaps, legacy SSE arithmetic) given a
   * misaligned address; the event's allocation is the guarded one it lies in, if any.
   */
  misaligned?: { instruction: string; address: Hex; alignment: number } | null;
  /**
   * The process that died is a fork() of a guarded one that did not exec (a
   * test forking a child to watch it die): the program, its parent, sees the
   * death; no runner worker died. Absent in reports of older versions.
   */
  forked?: boolean;
}

/** out-of-memory: the request that failed and what the device guard held then (bytes). */
export interface DeviceMemoryAccount {
  requested: number;
  liveCount: number;
  liveBytes: number;
  /** Granule bytes the live allocations hold (rounding and canary slack included). */
  liveMapped: number;
  quarantinedCount: number;
  /** Address space only: quarantined ranges are unmapped. */
  quarantinedBytes: number;
  pendingBytes: number;
  pooledBytes: number;
  readyBytes: number;
  givenBack: number;
  deviceTotal: number;
  deviceFree: number;
  /** Failed allocations so far in the process, this one included. */
  failures: number;
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
  /** The writing process's executable (its frames are the runtime); absent in events written before it was recorded. */
  runtime?: string | null;
  /** Where its JS frames are machinery (mate-guard's, the runners'); absent in events written before it was recorded. */
  machineryDirs?: string[];
  /** Packages (`node_modules/<name>/`, `*` within a segment) whose JS frames are machinery: mate-guard's and the runner adapters' stack roots; absent in events written before it was recorded. */
  machineryPackages?: string[];
  /** The native frames of the bad access: a fault's thread, or a bad free's call. */
  accessStack?: NativeStack | null;
  damage: { before: CanarySideDamage; after: CanarySideDamage } | null;
  /** Who asked for the memory: `host` (JS buffers), `native-heap`, `cuda`. */
  backend?: string;
  /** Null for an invalid free of a pointer that is no allocation's, and for illegal-address. */
  allocation: EventAllocation | null;
  /** CUDA reports: the device, and for illegal-address the driver's error and the call that saw it first. */
  device?: {
    api: 'cuda';
    ordinal: number;
    granule: number;
    error: string | null;
    errorText: string | null;
    foundBy: string | null;
    /** A multi-process job's place (RANK, LOCAL_RANK, WORLD_SIZE), where the launcher set them. */
    rank?: number | null;
    localRank?: number | null;
    worldSize?: number | null;
  };
  /** illegal-address: the guarded allocations live and recently freed when it surfaced, newest first. */
  candidates?: { liveTotal: number; live: EventAllocation[]; freed: EventAllocation[] };
  /**
   * illegal-address and cross-stream-free: launch tracking's state and, for
   * illegal-address, the launches not known to have completed (newest
   * first), or with launch blocking the one that faulted.
   */
  launches?: { tracking: boolean; off: string | null; blocking: boolean; total: number; list: DeviceLaunch[] };
  /** out-of-memory: the accounting. */
  memory?: DeviceMemoryAccount;
  /** cross-stream-free: the freeing stream, the stream whose use it did not wait for, and that use. */
  streams?: { free: Hex; use: Hex; useLaunch: DeviceLaunch | null };
  /** deadly-signal and uncaught-exception reports. */
  death?: DeathInfo;
  /** The process's counters when it was found (a process killed by a fault writes no others). */
  process: {
    allocations: number;
    peakLive: number;
    fallbacks: number;
    nativeAllocations?: number;
    nativeUnguarded?: number;
  };
  /**
   * Who was given it: `caller` when checkCanaries() returned it (a plugin
   * fails a test with it), `stderr` when its process printed it (at exit,
   * or the printer of a process a fault killed). Absent: not delivered yet.
   */
  delivered?: 'caller' | 'stderr';
  /** For canary damage: what the rerun in the faulting configuration found (the mate-* CLIs, guard-run). */
  rerun?: {
    mode: 'tail' | 'head';
    alignment: number;
    /** Native heap: the size placed byte-exact in the rerun (absent: none). */
    nativeExactSize?: number;
    fault: Omit<ViolationEvent, 'file'> | null;
    /** The rerun died of something else before any such fault (a deadly signal, an uncaught exception). */
    death?: Omit<ViolationEvent, 'file'> | null;
    /** The rerun started none of the damage's tests: it tells nothing about the damage. */
    ranNoTest?: true;
  };
  /** A run's suppressions matched it: counted, not failed (a fault still killed its process). */
  suppressed?: SuppressionVerdict;
  /** The rendered report, every line starting with `==mate-guard== `; absent until rendered. */
  text?: string;
  /** Where it was read from (set by the reader). */
  file?: string;
  /**
   * Deaths: whose native heap the dying process guarded (its
   * native-heap-<pid>.json, added when the report is rendered), so a hint
   * never asks for a setting that was on.
   */
  nativeHeap?: { globs: string[]; modules: string[] };
}

/** A kernel's exception: CUDA's sticky error, the context lost (illegal address, device-side assert, others). */
export const isKernelException = (e: Pick<ViolationEvent, 'kind'>): boolean =>
  e.kind === 'illegal-address' || e.kind === 'device-assert' || e.kind === 'device-fault';

export function parseEvent(json: string): ViolationEvent {
  return JSON.parse(json) as ViolationEvent;
}
