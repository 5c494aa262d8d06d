// Loads the compiled allocator: a prebuilt binary shipped in the package
// first (no build tools needed), else the one built from source at install.
import * as fs from 'node:fs';
import * as path from 'node:path';

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
  /** How inaccessible pages are made (MADV_GUARD_INSTALL markers, or mprotect on older kernels). */
  guardMethod: 'madvise-guard' | 'mprotect';
}

export interface NativeAllocation {
  id: number;
  size: number;
  ptr: string;
  mode: 'tail' | 'head';
  test: string | null;
  stack: string | null;
}

/** Where the dying process finds the report printer (crash/printer.h). */
interface PrinterPaths {
  node: string;
  script: string;
  /** PATH for the printer's symbolizers. */
  path: string;
}

export interface NativeBinding {
  /** `options`: the allocator settings; each key with a native side is read (options.inc). */
  configure(options: object, reportDir: string, printer: PrinterPaths): { guardMethod: NativeStats['guardMethod']; pageSize: number };
  /** `stack`: an id from internString. */
  alloc(size: number, stack?: number): ArrayBuffer;
  internString(text: string): number;
  setCurrentTest(name: string | null): void;
  /** Events (JSON) of violations found now or at free since the last call. */
  checkCanaries(all: boolean): string[];
  stats(): NativeStats;
  snapshot(): NativeAllocation[];
  /** The C++ report kinds, in enum order. */
  reportKinds(): string[];
}

const packageRoot = path.resolve(__dirname, '..', '..');

function nativeBinaryCandidates(): string[] {
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
