// Guarding the native heap of chosen modules (`nativeModules`,
// `nativeSampleRate`): the native side redirects each matching module's
// allocator imports as it loads. Here: starting it, a state file per
// process (which globs matched which modules), and the warning for a glob
// that matched nothing in the whole run.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { afterAddonLoads } from './addon-loads';
import type { NativeBinding } from './native';
import { writeWholeFile } from '../run/private-files';

const STATE_FILE = /^native-heap-\d+\.json$/;

let lastWritten = '';

/**
 * `native-heap-<pid>.json` in the report directory: which globs matched
 * which modules in this process, so the run can warn about a glob no
 * process matched (a process that dies of a fault writes no stats).
 */
function writeState(native: NativeBinding, reportDir: string, final = false): void {
  const text = JSON.stringify({ pid: process.pid, ...native.nativeHeap(), ...(final ? { final: true } : {}) });
  if (text === lastWritten) return;
  lastWritten = text;
  try {
    const file = path.join(reportDir, `native-heap-${process.pid}.json`);
    writeWholeFile(file, text);
  } catch {
    // best effort, like the stats
  }
}

/**
 * Redirects the allocator imports of every loaded module matching `globs`,
 * and of each one loaded later (the native side watches the executable's
 * dlopen: each addon is patched before its initializer runs); after each
 * addon load the native side checks again and the state file is updated.
 */
export function startNativeHeap(native: NativeBinding, globs: readonly string[], reportDir: string): void {
  native.guardNativeModules([...globs]);
  afterAddonLoads(() => {
    native.nativeHeapRefresh();
    writeState(native, reportDir);
  });
}

/**
 * The state file, now (at exit: the last word, marked final: which modules
 * made allocation calls is known only then).
 */
export function flushNativeHeapState(native: NativeBinding, reportDir: string): void {
  writeState(native, reportDir, true);
}

interface StateFile {
  globs: string[];
  unmatched: string[];
  final?: boolean;
  modules?: Array<{
    path: string;
    slots: number;
    symbols?: string[];
    error: string | null;
    allocationCalls?: boolean;
    memoryImports?: string[];
  }>;
}

function readStates(reportDir: string): StateFile[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(reportDir).filter((n) => STATE_FILE.test(n));
  } catch {
    return [];
  }
  const out: StateFile[] = [];
  for (const name of names) {
    try {
      out.push(JSON.parse(fs.readFileSync(path.join(reportDir, name), 'utf8')) as StateFile);
    } catch {
      // a file being replaced: skip
    }
  }
  return out;
}

/** A chosen module that made no allocation call mate-guard saw, and what it imports. */
export interface SilentModule {
  path: string;
  /** The allocation functions it imports (redirected). */
  symbols: string[];
  /** The memory-mapping calls it imports (mmap, brk, ...). */
  memoryImports: string[];
}

/**
 * Chosen modules that made no allocation call mate-guard saw in any process
 * that ran to its end (a process that died said nothing final), and none in
 * any other: their allocations never came through their imports.
 */
export function silentNativeModules(reportDir: string): SilentModule[] {
  const silent = new Map<string, SilentModule>();
  const called = new Set<string>();
  for (const s of readStates(reportDir)) {
    for (const m of s.modules ?? []) {
      if (m.error) continue; // not patched: said by its own line
      if (m.allocationCalls) called.add(m.path);
      else if (s.final)
        silent.set(m.path, { path: m.path, symbols: m.symbols ?? [], memoryImports: m.memoryImports ?? [] });
    }
  }
  return [...silent.values()]
    .filter((m) => !called.has(m.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Why a chosen module made no allocation call mate-guard saw, by what it imports. */
function silentLine(m: SilentModule): string {
  const lead = `[mate-guard] native heap: ${m.path} matched but made no allocation calls mate-guard can see`;
  // Only a module that maps memory itself and imports no allocation function carries an allocator of its own.
  if (m.symbols.length === 0 && m.memoryImports.length > 0)
    return `${lead}: it imports no allocation function yet maps memory itself (${m.memoryImports.join(', ')}): it carries its own allocator (statically linked, as Rust and Go addons often do), whose memory is not guarded\n`;
  if (m.symbols.length === 0)
    return `${lead}: it imports no allocation function and maps no memory: it has no heap of its own to guard\n`;
  return `${lead}: it imports ${m.symbols.join(', ')} but made none of those calls in this run\n`;
}

/** One line per chosen module that made no allocation call mate-guard saw ('' when none). */
export function formatSilentModules(modules: readonly SilentModule[]): string {
  return modules.map(silentLine).join('');
}

/** The globs and chosen modules of one process of the run, from its state file (undefined: it guarded no native heap). */
export function nativeHeapOf(reportDir: string, pid: number): { globs: string[]; modules: string[] } | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(path.join(reportDir, `native-heap-${pid}.json`), 'utf8')) as {
      globs?: string[];
      modules?: Array<{ path: string }>;
    };
    if (!Array.isArray(s.globs) || s.globs.length === 0) return undefined;
    return { globs: s.globs, modules: (s.modules ?? []).map((m) => m.path) };
  } catch {
    return undefined;
  }
}

/** Globs that no process of the run (its report directory) matched. */
export function unmatchedNativeGlobs(reportDir: string): string[] {
  const seen = new Set<string>();
  const matched = new Set<string>();
  for (const s of readStates(reportDir)) {
    for (const g of s.globs) {
      seen.add(g);
      if (!s.unmatched.includes(g)) matched.add(g);
    }
  }
  return [...seen].filter((g) => !matched.has(g));
}

/** One warning line per glob that matched no loaded module ('' when none). */
export function formatUnmatchedGlobs(globs: readonly string[]): string {
  return globs
    .map(
      (g) =>
        `[mate-guard] warning: native heap: ${JSON.stringify(g)} matched no loaded module, so nothing of it was guarded (globs match a module's absolute path or file name, e.g. '*my_addon.node')\n`,
    )
    .join('');
}
