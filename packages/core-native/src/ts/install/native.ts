// Loads the compiled allocator: a prebuilt binary shipped in the package
// first (no build tools needed), else the one built from source at install
// (binary-fit.ts decides which fits).
import * as path from 'node:path';

import { NativeUnavailableError } from '../errors';
import { binaryCandidates, currentHost, firstLine, rebuildHint, unsupportedReason } from './binary-fit';

/** The counters every backend keeps (binding/counters.h). */
export interface AllocationCounts {
  allocations: number;
  frees: number;
  live: number;
  peakLive: number;
  liveBytes: number;
  fallbacks: number;
  fallbackReason: string | null;
  quarantined: number;
}

/** Why a chosen module's allocation calls went to libc. */
export interface NativeUnguardedBy {
  /** nativeSampleRate left them out. */
  sampledOut: number;
  /** Made inside a guarded allocation on the same thread (its JS stack capture). */
  reentrant: number;
  /** The allocator gave no slot (its fallback reasons say why). */
  noSlot: number;
  /** Reallocs of blocks libc made (they stay libc's). */
  libcBlocks: number;
}

/**
 * Site-aware sampling (nativeSiteFirst, while nativeSampleRate > 1): the
 * call sites of the chosen modules and whether each had its first K calls
 * guarded. Absent when it is off.
 */
export interface NativeSiteCounts {
  /** K: the first calls of each site that are guarded. */
  first: number;
  /** Distinct call sites seen (return addresses). */
  seen: number;
  /** Sites called at least K times (the rest were guarded on every call). */
  reachedFirst: number;
  /** Sites one of whose first K calls got no guarded slot. */
  missed: number;
  /** Allocations guarded as one of their site's first K. */
  forced: number;
  /** Calls from sites the full table could not take (sampled plainly). */
  untrackedCalls: number;
  /** Entries of the per-process site table. */
  capacity: number;
}

export interface NativeStats extends AllocationCounts {
  /** Host: each reason an allocation ran unguarded, with its count (fallbackReason is the last one). */
  fallbackReasons?: Record<string, number>;
  quarantinedBytes: number;
  reservedBytes: number;
  maxLive: number;
  /** mprotect: full collections asked of the engine near the live-allocation cap. */
  collectionsNearCap: number;
  violations: number;
  /** How inaccessible pages are made (MADV_GUARD_INSTALL markers, or mprotect on older kernels). */
  guardMethod: 'madvise-guard' | 'mprotect';
  /** Native heap: allocations of the chosen modules that were guarded. */
  nativeAllocations: number;
  /** Native heap: allocation calls that went to libc (sampled out, or no slot). */
  nativeUnguarded: number;
  /** Why, each counted (they add up to nativeUnguarded). */
  nativeUnguardedBy?: NativeUnguardedBy;
  /** Native heap: site-aware sampling's coverage, when it is on. */
  nativeSites?: NativeSiteCounts;
  /** Native heap: frees of pointers mate-guard did not hand out, passed to libc. */
  nativeForeignFrees: number;
  /** Native heap: double and invalid frees found (and ignored). */
  nativeBadFrees: number;
  /** Native heap: guarded pointers freed or reallocated by other modules (node, libstdc++, libc), brought home by the free router. */
  nativeRoutedFrees: number;
  /** Native heap, the foreign quarantine: frees of memory the guard did not allocate that were held (filled, checked at release), released at once while it is on (too large, lock busy), and found written after their free. */
  nativeForeignHeld: number;
  nativeForeignReleasedAtOnce: number;
  nativeForeignWritten: number;
  /** Native heap: freed one-page (kept) slots closed by a guard marker / by mprotect (keptClose). */
  nativeKeptMarkerCloses: number;
  nativeKeptMprotectCloses: number;
  /** This thread's allocations whose stack was known already / captured. */
  stackKeyHits: number;
  stackKeyMisses: number;
  /** Raw V8 stack samples taken to key stacks. */
  stackV8Samples: number;
  /** Of the misses, stacks that end in async frames whose text was put together from earlier captures (their own frames' text, this microtask's async tail), not captured. */
  stackKeysComposed: number;
  /** Of the hits, native allocations made in the same native call as the one before (no return to JS since, checked by a mark the call holds): its stack id reused without looking it up. */
  stackKeySameCall: number;
  /** Whether dropped buffers are released during GC (else a turn later). */
  releasedDuringGc: boolean;
  /** The CUDA device guard's own counters, when it is on (added in by install/device.ts). */
  device?: NativeDeviceStats;
}

export interface NativeDeviceStats extends AllocationCounts {
  physicalBytes: number;
  chunksCreated: number;
  readyHits: number;
  readyMisses: number;
  recycled: number;
  violations: number;
  /** Allocations that failed for want of GPU memory (the first one reported). */
  outOfMemory?: number;
  /** Guarded allocations shared with another process (CUDA IPC, the Python hook). */
  sharedIpc?: number;
  granule: number;
  /** Launch tracking ran (CUPTI); else `trackingOff` says why. */
  launchTracking: boolean;
  trackingOff?: string;
  launches: number;
  /** Launches whose parameters could not be read (or that have none). */
  launchesUnread: number;
  /** Parameter words that pointed into guarded allocations. */
  guardedArgs: number;
  /** Time spent recording launches (0 unless MATE_GUARD_CUDA_STATS is set: the clock is read only then). */
  trackMs: number;
  /** Modules whose CUDA calls were redirected, with the import slots rewritten. */
  redirected: Array<{ path: string; slots: number }>;
}

/**
 * configureDevice's options (binding/device_binding.cc): configure()'s
 * settings object (each row with a native side, options.inc), and:
 */
export interface NativeDeviceOptions extends Record<string, unknown> {
  /** Modules besides the addons whose CUDA calls are redirected (nativeModules). */
  redirectGlobs: string[];
}

/**
 * A variable of a chosen module initialised to an allocator function
 * (libxml2's `xmlFree = free`): redirected while it held libc's function,
 * the program's once it set it (`since`: before mate-guard saw the module,
 * or later).
 */
export interface NativeHeapVariable {
  address: string;
  symbol: string;
  redirected: boolean;
  owner: 'mate-guard' | 'program';
  since: 'install' | 'later' | null;
  firstHeld: string;
  held: string;
}

/** Which globs matched which modules (nativeHeap()). */
export interface NativeHeapState {
  globs: string[];
  unmatched: string[];
  modules: Array<{
    path: string;
    slots: number;
    symbols: string[];
    own: string[];
    error: string | null;
    variables: NativeHeapVariable[];
    /** Whether it made an allocation call mate-guard saw (through a redirected import or variable). */
    allocationCalls: boolean;
    /** Its own weak functions (mangled) whose calls went to another module's copy, bound to its own now. */
    rebound: string[];
    /** Memory-mapping calls it imports (mmap, brk, ...): with no allocation import, an allocator of its own. */
    memoryImports: string[];
  }>;
}

export interface NativeAllocation {
  id: number;
  size: number;
  ptr: string;
  mode: 'tail' | 'head';
  backend: 'host' | 'native-heap' | 'cuda';
  test: string | null;
  stack: string | null;
}

/** Where the dying process finds the report printer (report/printer.h). */
interface PrinterPaths {
  /** PATH for the printer's symbolizers. */
  path: string;
  /** No process outlives this one to show what it reported before dying: the printer shows those too. */
  withEarlier: boolean;
  /** JS frames under these directories are machinery (mate-guard's, the runners'): recorded in every event (report/event_origin.h). */
  machineryDirs: string[];
  /** JS frames in node_modules/<one of these>/ are machinery (the runner adapters' stack roots, mate-guard's): recorded in every event. */
  machineryPackages: string[];
}

/** A native frame as the binding returns it (see symbolize/types for offset). */
export interface NativeFrameJs {
  pc: string;
  module: string | null;
  moduleIndex: number | null;
  offset: number;
  returnAddress: boolean;
}

/** Test-only hooks of the native backtrace code. */
export interface NativeStackTesting {
  /** The native frames of this very call. */
  captureHere(): NativeFrameJs[];
  /** An exported symbol of a loaded object ('' = the main program), resolved by the module map. */
  addressOf(module: string, symbol: string): NativeFrameJs | null;
  /** Module map paths, by index. */
  moduleTable(): string[];
  /** Prints each fault's native frames to stderr, then passes the fault on. */
  installFaultProbe(): boolean;
}

/**
 * A native capture's answer: the text's id, or, where the text ends in
 * async frames (a stack that reached its bottom inside a microtask), also
 * its two parts, so that native code can give the same call site in a later
 * microtask, and other call sites in this one, their text without
 * capturing: [text, sync part, async tail, sync lines, tail lines, frame limit].
 */
export type NativeCaptureResult = number | [number, number, number, number, number, number];

export interface NativeBinding {
  /** `options`: the allocator settings; each key with a native side is read (options.inc). */
  configure(
    options: object,
    reportDir: string,
    printer: PrinterPaths,
  ): { guardMethod: NativeStats['guardMethod']; pageSize: number };
  /** `stack`: an id from internString; `token`: from allocKeyed, the key `stack` is the text of. */
  /** `oneByte`: the buffer's elements are bytes (placed byte-exact under exactPlacement). */
  alloc(size: number, stack?: number, token?: number, oneByte?: boolean): ArrayBuffer;
  /** The buffer when the caller's stack is known, else a token for alloc (nothing allocated). */
  allocKeyed(size: number, oneByte?: boolean): ArrayBuffer | number;
  /** Whether allocKeyed can key stacks here; sets the frames a key covers. */
  stackKeys(frames: number): boolean;
  resetStackKeys(): void;
  internString(text: string): number;
  setCurrentTest(name: string | null): void;
  /** Events (JSON) of violations found now or at free since the last call. */
  checkCanaries(all: boolean): string[];
  stats(): NativeStats;
  snapshot(): NativeAllocation[];
  /** The C++ report kinds, in enum order. */
  reportKinds(): string[];
  /**
   * Rebuilds the module map if objects were loaded or unloaded since the
   * last build (or always, with `force`); true when it did. Cheap when
   * nothing changed. Reports name only the modules the map knew.
   */
  refreshModuleMap(force?: boolean): boolean;
  /** Redirects the allocator imports of the modules matching `globs`, loaded now and later. */
  guardNativeModules(globs: string[]): void;
  /** Patches modules loaded since (cheap when none were). */
  nativeHeapRefresh(): void;
  nativeHeap(): NativeHeapState;
  /**
   * Registers, for this thread, the capture native code calls for the JS
   * stack of an addon's allocation or launch (returns an internString id).
   * False where the engine cannot tell when calling it is safe.
   */
  registerJsStackCapture(capture: () => NativeCaptureResult): boolean;
  /** Turns the CUDA device guard on. Throws without CUDA. */
  configureDevice(options: NativeDeviceOptions): { trackingOff: string };
  deviceStats(): NativeDeviceStats | null;
  /** Redirects the CUDA calls of addons loaded since (cheap when none were). */
  deviceRefresh(): void;
  /** Stops the device guard's background work and finishes pending checks. */
  shutdownDevice(): void;
  nativeStackTesting: NativeStackTesting;
  /** The one report formatter (report/format/): an event's JSON to its text report. */
  formatReport(eventJson: string, options: { cwd: string }): string;
  /** What the event's filed rerun found, as the run's terminal prints it under the report ('' when nothing). */
  formatRerun(eventJson: string, options: { cwd: string }): string;
  /** '' when a suppressions file's text is good, else why not (naming file:line). */
  suppressionsProblem(text: string, file: string): string;
  /** The first rule of a suppressions file's text matching the event, as JSON ({file, line, rule}), or ''. */
  matchSuppression(eventJson: string, text: string, file: string): string;
  /** The one symbolizer (report/symbolizer.h): frames (JSON) symbolized, as JSON. */
  symbolizeFrames(
    framesJson: string,
    options?: {
      path?: string;
      timeoutMs?: number;
      llvmSymbolizer?: string | false;
      addr2line?: string | false;
      cache?: boolean;
    },
  ): string;
  clearSymbolCache(): void;
  /** C++ names demangled ('' where a name is none). */
  demangleNames(names: string[]): string[];
  /** `mate report --format sarif|github` from the merged events (report/ci-formats.ts). */
  formatReports(inputJson: string, format: 'sarif' | 'github', options: { cwd: string }): string;
  /** The line above the reports `who` gave its test runner before `crash` (JSON) killed it (report/format/earlier_header.h). */
  earlierReportsHeader(crashJson: string, count: number, who: string): string;
  /** '' when the event's JSON is one this version reads, else why not (the field named). */
  validateEvent(eventJson: string): string;
  /** A report's text from an artifact with what a terminal would obey spelled out; newlines and tabs kept. */
  visibleLines(text: string): string;
}

const packageRoot = path.resolve(__dirname, '..', '..');

let binding: NativeBinding | undefined;

/**
 * The compiled allocator: the first candidate (binary-fit.ts) that fits this
 * machine and loads. None: one line naming each file tried and why it was
 * passed over, and what to do; thrown as a setup error, so every entry
 * point prints that line and exits 2 instead of a stack.
 */
export function loadNative(): NativeBinding {
  if (binding) return binding;
  const host = currentHost();
  const refused = unsupportedReason(host);
  if (refused) throw new NativeUnavailableError(refused);
  const tried: string[] = [];
  for (const c of binaryCandidates(packageRoot, 'mate_guard.node', host)) {
    if (c.problem) {
      tried.push(`${c.label}: ${c.problem}`);
      continue;
    }
    try {
      binding = require(c.file) as NativeBinding;
      return binding;
    } catch (err) {
      tried.push(`${c.label}: does not load (${firstLine((err as Error).message)})`);
    }
  }
  throw new NativeUnavailableError(
    `no native allocator loads here (tried ${tried.join('; ')}); ${rebuildHint(packageRoot)}`,
  );
}
