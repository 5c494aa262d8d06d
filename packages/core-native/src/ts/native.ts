// Loads the compiled allocator: a prebuilt binary shipped in the package
// first (no build tools needed), else the one built from source at install.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface NativeViolation {
  kind: string;
  text: string;
  json: string;
}

export interface NativeStats {
  allocations: number;
  frees: number;
  live: number;
  peakLive: number;
  liveBytes: number;
  fallbacks: number;
  fallbackReason: string | null;
  quarantined: number;
  quarantinedBytes: number;
  reservedBytes: number;
  maxLive: number;
  violations: number;
  backend: 'madvise-guard' | 'mprotect';
  /** Native heap: allocations of the chosen modules that were guarded. */
  nativeAllocations: number;
  /** Native heap: allocation calls that went to libc (sampled out, or no slot). */
  nativeUnguarded: number;
  /** Native heap: frees of pointers mate-guard did not hand out, passed to libc. */
  nativeForeignFrees: number;
  /** Native heap: double and invalid frees found (and ignored). */
  nativeBadFrees: number;
}

export interface NativeHeapState {
  globs: string[];
  unmatched: string[];
  modules: Array<{ path: string; slots: number; symbols: string[]; own: string[]; error: string | null }>;
}

export interface NativeAllocation {
  id: number;
  size: number;
  ptr: string;
  mode: 'tail' | 'head';
  backend: 'host' | 'native-heap';
  test: string | null;
  stack: string | null;
}

export interface NativeOptions {
  tailMode?: boolean;
  alignment?: number;
  quarantineMaxBytes?: number;
  quarantineMaxCount?: number;
  logAllocations?: boolean;
  forceMprotect?: boolean;
  regionBytes?: number;
  maxLiveMprotect?: number;
  nativeSampleRate?: number;
}

export interface NativeBinding {
  configure(options: NativeOptions, reportDir: string): { backend: NativeStats['backend']; pageSize: number };
  /** `stack`: an id from internString. */
  alloc(size: number, stack?: number): ArrayBuffer;
  internString(text: string): number;
  setCurrentTest(name: string | null): void;
  checkCanaries(all: boolean): NativeViolation[];
  stats(): NativeStats;
  snapshot(): NativeAllocation[];
  guardNativeModules(globs: string[]): void;
  nativeHeapRefresh(): void;
  nativeHeap(): NativeHeapState;
}

const packageRoot = path.resolve(__dirname, '..');

export function nativeBinaryCandidates(): string[] {
  return [
    path.join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`, 'mate_guard.node'),
    path.join(packageRoot, 'build', 'Release', 'mate_guard.node'),
  ];
}

let binding: NativeBinding | undefined;

export function loadNative(): NativeBinding {
  if (binding) return binding;
  const candidates = nativeBinaryCandidates();
  const found = candidates.find((file) => fs.existsSync(file));
  if (!found) {
    throw new Error(
      `mate-guard: the native allocator is not built (looked for ${candidates.join(', ')}). ` +
        'Run `npm install` (or `npm run build:native -w @mate-guard/core`); building needs cmake and a C++17 compiler.',
    );
  }
  binding = require(found) as NativeBinding;
  return binding;
}
