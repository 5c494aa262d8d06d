// Guarding the native heap of chosen modules (`nativeModules`,
// `nativeSampleRate`): the TS side is small on purpose. Validation of the two
// options, the process.dlopen hook that lets the native side patch every
// addon as it loads, and the "glob matched nothing" warning.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from './errors';
import type { NativeBinding } from './native';
import { parseList, show } from './values';

/** Internal variables `mate guard-run` passes to its auto-install preload. */
export const NATIVE_HEAP_ENV = {
  modules: 'MATE_GUARD_ALLOCATOR_NATIVE',            // JSON array of globs
  sampleRate: 'MATE_GUARD_ALLOCATOR_NATIVE_SAMPLE_RATE',
} as const;

export function parseNativeModules(value: unknown, where: string): string[] {
  const list = parseList(value, where);
  for (const glob of list) {
    if (glob.includes('\0')) throw new GuardConfigError(`${where}: ${show(glob)} is not a glob`);
  }
  return list;
}

export function parseSampleRate(value: unknown, where: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 2 ** 31) {
    throw new GuardConfigError(`${where}: ${show(value)} is not allowed; use an integer from 1 (every allocation) to 2147483648`);
  }
  return n;
}

let dlopenHooked = false;

/**
 * Redirects the allocator imports of every loaded module matching `globs`,
 * and of each one loaded later: the native side watches the executable's
 * dlopen (each addon is patched before its initializer runs); after each
 * `process.dlopen` the native side checks again and this process's state
 * file is updated. Libraries an addon dlopens itself are caught at the next
 * canary check (test start and end).
 */
export function startNativeHeap(native: NativeBinding, globs: readonly string[], reportDir: string): void {
  native.guardNativeModules([...globs]);
  writeNativeHeapState(native, reportDir);
  if (dlopenHooked) return;
  dlopenHooked = true;
  const original = process.dlopen;
  const hooked = function dlopen(this: unknown, ...args: Parameters<typeof process.dlopen>): void {
    try {
      Reflect.apply(original, this, args);
    } finally {
      native.nativeHeapRefresh();
      writeNativeHeapState(native, reportDir);
    }
  };
  process.dlopen = hooked as typeof process.dlopen;
}

let lastWritten = '';

/**
 * `native-heap-<pid>.json` in the report directory: which globs matched
 * which modules in this process, so the run can warn about a glob no
 * process matched (a process that dies of a fault writes no stats).
 */
export function writeNativeHeapState(native: NativeBinding, reportDir: string): void {
  const state = native.nativeHeap();
  const text = JSON.stringify({ pid: process.pid, ...state });
  if (text === lastWritten) return;
  lastWritten = text;
  try {
    const file = path.join(reportDir, `native-heap-${process.pid}.json`);
    fs.writeFileSync(file + '.tmp', text);
    fs.renameSync(file + '.tmp', file);
  } catch {
    // best effort, like the stats
  }
}

/** Globs that no process of the run (report directory) matched. */
export function unmatchedNativeGlobs(reportDir: string): string[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(reportDir).filter((n) => /^native-heap-\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const seen = new Set<string>();
  const matched = new Set<string>();
  for (const name of names) {
    try {
      const s = JSON.parse(fs.readFileSync(path.join(reportDir, name), 'utf8')) as { globs: string[]; unmatched: string[] };
      for (const g of s.globs) {
        seen.add(g);
        if (!s.unmatched.includes(g)) matched.add(g);
      }
    } catch {
      // a file being replaced: skip
    }
  }
  return [...seen].filter((g) => !matched.has(g));
}

/** One warning line per glob that matched no loaded module ('' when none). */
export function formatUnmatchedGlobs(globs: readonly string[]): string {
  return globs
    .map((g) => `[mate-guard] warning: native heap: ${JSON.stringify(g)} matched no loaded module, so nothing of it was guarded (globs match a module's absolute path or file name, e.g. '*my_addon.node')\n`)
    .join('');
}
