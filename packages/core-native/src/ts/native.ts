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
  /** This thread's allocations whose stack was known already / captured. */
  stackKeyHits: number;
  stackKeyMisses: number;
  /** Whether dropped buffers are released during GC (else a turn later). */
  releasedDuringGc: boolean;
}

export interface NativeAllocation {
  id: number;
  size: number;
  ptr: string;
  mode: 'tail' | 'head';
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
}

export interface NativeBinding {
  configure(options: NativeOptions, reportDir: string): { backend: NativeStats['backend']; pageSize: number };
  /** `stack`: an id from internString; `token`: from allocKeyed, the key `stack` is the text of. */
  alloc(size: number, stack?: number, token?: number): ArrayBuffer;
  /** The buffer when the caller's stack is known, else a token for alloc (nothing allocated). */
  allocKeyed(size: number): ArrayBuffer | number;
  /** Whether allocKeyed can key stacks here; sets the frames a key covers. */
  stackKeys(frames: number): boolean;
  resetStackKeys(): void;
  internString(text: string): number;
  setCurrentTest(name: string | null): void;
  checkCanaries(all: boolean): NativeViolation[];
  stats(): NativeStats;
  snapshot(): NativeAllocation[];
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
