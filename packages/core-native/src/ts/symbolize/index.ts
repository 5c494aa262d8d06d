// Native frames (module + offset) to function and file:line, outside any
// signal handler. In order: llvm-symbolizer when on PATH (one process for
// all frames), else addr2line (one process per module), then the module's
// own ELF symbol tables for what is still unnamed (names, no lines), else
// module + offset alone. Never throws and never runs past its time bound:
// a missing tool, module or symbol just leaves the frame less named.
import * as fs from 'node:fs';

import { demangleName } from './demangle';
import { readElfFunctions, type ElfFunctionTable } from './elf';
import { isEmpty, parseAddr2line, parseLlvmSymbolizer } from './tool-output';
import { findOnPath, runTool, runToolSync, type ToolOutput, type ToolRun } from './tools';
import type { NativeFrameRef, SourceLocation, SymbolizedFrame, SymbolizeOptions, SymbolSource } from './types';

export type { NativeFrameRef, SourceLocation, SymbolizedFrame, SymbolizeOptions, SymbolSource } from './types';
export { readElfFunctions, ElfFunctionTable, type ElfFunction } from './elf';

const DEFAULT_TIMEOUT_MS = 5000;
const CACHE_LIMIT = 50_000;

interface Resolved {
  locations: SourceLocation[]; // innermost first; empty when unknown
  source: SymbolSource;
}

// Per process: module + address -> what it resolved to.
const cache = new Map<string, Resolved>();
// Per process: parsed symbol tables, keyed by path, size and mtime.
const elfTables = new Map<string, ElfFunctionTable | undefined>();

/** Forgets every cached symbol and symbol table. */
export function clearSymbolCache(): void {
  cache.clear();
  elfTables.clear();
}

interface Query {
  key: string;
  module: string;
  address: number; // what the tools are asked: offset, or offset - 1 for a return address
  resolved?: Resolved;
}

function keyOf(module: string, address: number): string {
  return `${module}\u0000${address}`;
}

function tool(name: 'llvm-symbolizer' | 'addr2line' | 'c++filt', pinned: string | false | undefined, searchPath: string | undefined): string | undefined {
  if (pinned === false) return undefined;
  return pinned ?? findOnPath(name, searchPath);
}

function elfTable(module: string): ElfFunctionTable | undefined {
  let id: string;
  try {
    const st = fs.statSync(module);
    if (!st.isFile()) return undefined;
    id = `${module}\u0000${st.size}\u0000${st.mtimeMs}`;
  } catch {
    return undefined;
  }
  if (!elfTables.has(id)) {
    if (elfTables.size >= 64) elfTables.clear();
    elfTables.set(id, readElfFunctions(module));
  }
  return elfTables.get(id);
}

const hex = (n: number): string => `0x${n.toString(16)}`;

/**
 * The whole symbolization as a sequence of tool runs: the caller runs each
 * (synchronously or not) and sends back its stdout.
 */
function* plan(frames: readonly NativeFrameRef[], options: SymbolizeOptions): Generator<ToolRun, SymbolizedFrame[], ToolOutput> {
  const budget = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + budget;
  const left = (): number => deadline - Date.now();
  // A hung tool must not cost the ELF names: tools stop a fifth early.
  const toolDeadline = deadline - Math.min(1000, budget / 5);
  const toolTime = (): number => toolDeadline - Date.now();
  const useCache = options.cache !== false;
  const searchPath = options.path ?? process.env.PATH;

  const queries = new Map<string, Query>();
  const queryOf = frames.map((f) => {
    if (!f.module || !Number.isFinite(f.offset)) return undefined;
    const address = Math.max(0, f.offset - (f.returnAddress ? 1 : 0));
    const key = keyOf(f.module, address);
    let q = queries.get(key);
    if (!q) {
      q = { key, module: f.module, address, resolved: useCache ? cache.get(key) : undefined };
      queries.set(key, q);
    }
    return q;
  });
  const pending = (): Query[] => [...queries.values()].filter((q) => !q.resolved);

  const llvm = tool('llvm-symbolizer', options.tools?.llvmSymbolizer, searchPath);
  let llvmAnswered = false;
  if (llvm) {
    // Quoted module names; a path with a quote in it is left to the fallbacks.
    const asked = pending().filter((q) => !q.module.includes('"') && !q.module.includes('\n'));
    if (asked.length) {
      const out = yield {
        command: llvm,
        args: ['--inlining', '--demangle', '--functions=linkage', '--output-style=LLVM'],
        input: asked.map((q) => `"${q.module}" ${hex(q.address)}\n`).join(''),
        timeoutMs: toolTime(),
      };
      const blocks = out === undefined ? undefined : parseLlvmSymbolizer(out, asked.length);
      llvmAnswered = blocks !== undefined;
      blocks?.forEach((locs, i) => {
        if (locs.some((l) => !isEmpty(l))) asked[i].resolved = { locations: locs, source: 'llvm-symbolizer' };
      });
    }
  }
  // addr2line when llvm-symbolizer is absent or could not run at all (too
  // old for these flags, crashed); not when it answered "unknown".
  const addr2line = llvmAnswered ? undefined : tool('addr2line', options.tools?.addr2line, searchPath);
  if (addr2line) {
    const byModule = new Map<string, Query[]>();
    for (const q of pending()) byModule.set(q.module, [...(byModule.get(q.module) ?? []), q]);
    for (const [module, asked] of byModule) {
      const out = yield {
        command: addr2line,
        args: ['-a', '-f', '-C', '-i', '-e', module],
        input: asked.map((q) => `${hex(q.address)}\n`).join(''),
        timeoutMs: toolTime(),
      };
      if (out === undefined) continue;
      const found = parseAddr2line(out);
      for (const q of asked) {
        const locs = found.get(q.address);
        if (locs?.some((l) => !isEmpty(l))) q.resolved = { locations: locs, source: 'addr2line' };
      }
    }
  }

  // A name with no debug info behind it came from a symbol table, and
  // llvm-symbolizer takes the nearest .dynsym symbol of a stripped module
  // whatever its size: keep it only if a symbol really covers the address.
  for (const q of queries.values()) {
    const r = q.resolved;
    if (!r || r.source === 'elf-symbols' || r.locations.some((l) => l.file)) continue;
    const table = left() > 0 ? elfTable(q.module) : undefined;
    if (table && !table.lookup(q.address)) q.resolved = undefined;
  }

  // Out of time for the tools: whatever the fallbacks find is not cached, so
  // a later report may ask the tools again.
  const toolsInTime = toolTime() > 0;

  // What the tools could not name (or there were none): the ELF symbols.
  const fromElf: Query[] = [];
  for (const q of pending()) {
    if (left() <= 0) break;
    const fn = elfTable(q.module)?.lookup(q.address);
    if (fn) {
      q.resolved = { locations: [{ function: fn.name }], source: 'elf-symbols' };
      fromElf.push(q);
    }
  }
  const mangled = [...new Set(fromElf.map((q) => q.resolved!.locations[0].function!).filter((n) => n.startsWith('_Z')))];
  const cxxfilt = mangled.length ? tool('c++filt', options.tools?.cxxfilt, searchPath) : undefined;
  const demangled = new Map<string, string>();
  if (cxxfilt) {
    const out = yield { command: cxxfilt, args: [], input: mangled.join('\n') + '\n', timeoutMs: left() };
    const names = out?.split('\n');
    if (names && names.length >= mangled.length) mangled.forEach((m, i) => names[i] && demangled.set(m, names[i]));
  }
  for (const q of fromElf) {
    const loc = q.resolved!.locations[0];
    loc.function = demangled.get(loc.function!) ?? demangleName(loc.function!) ?? loc.function;
  }

  const complete = toolsInTime && left() > 0;
  for (const q of queries.values()) {
    // A tool's answer is final; a fallback's only when the tools had their time.
    const final = complete || q.resolved?.source === 'llvm-symbolizer' || q.resolved?.source === 'addr2line';
    q.resolved ??= { locations: [], source: 'none' };
    if (useCache && final) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(q.key, q.resolved);
    }
  }

  return frames.map((f, i) => {
    const r = queryOf[i]?.resolved ?? { locations: [], source: 'none' as const };
    const [own, ...inlined] = r.locations;
    const frame: SymbolizedFrame = {
      module: f.module ?? null,
      offset: f.offset,
      returnAddress: f.returnAddress ?? false,
      source: r.source,
      ...own,
    };
    if (f.pc !== undefined) frame.pc = f.pc;
    if (inlined.length) frame.inlined = inlined.map((l) => ({ ...l }));
    return frame;
  });
}

/** Symbolizes synchronously (spawnSync): for reports made in-process. */
export function symbolizeFramesSync(frames: readonly NativeFrameRef[], options: SymbolizeOptions = {}): SymbolizedFrame[] {
  try {
    const steps = plan(frames, options);
    let step = steps.next(undefined);
    while (!step.done) step = steps.next(runToolSync(step.value));
    return step.value;
  } catch {
    return unsymbolized(frames);
  }
}

/**
 * C++ names demangled (c++filt where it is on PATH, else the small built-in
 * demangler; a name neither knows stays as it is), for names that are not
 * frames: CUDA kernels' names in device reports.
 */
export function demangleNamesSync(names: readonly string[], options: SymbolizeOptions = {}): Map<string, string> {
  const out = new Map<string, string>();
  const mangled = [...new Set(names.filter((n) => n.startsWith('_Z') && !n.includes('\n')))];
  if (!mangled.length) return out;
  const cxxfilt = tool('c++filt', options.tools?.cxxfilt, options.path ?? process.env.PATH);
  const text = cxxfilt ? runToolSync({ command: cxxfilt, args: [], input: mangled.join('\n') + '\n', timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }) : undefined;
  const lines = text?.split('\n');
  mangled.forEach((m, i) => {
    const name = lines && lines.length >= mangled.length && lines[i] ? lines[i] : demangleName(m);
    if (name && name !== m) out.set(m, name);
  });
  return out;
}

/** Symbolizes without blocking the event loop. Never rejects. */
export async function symbolizeFrames(frames: readonly NativeFrameRef[], options: SymbolizeOptions = {}): Promise<SymbolizedFrame[]> {
  try {
    const steps = plan(frames, options);
    let step = steps.next(undefined);
    while (!step.done) step = steps.next(await runTool(step.value));
    return step.value;
  } catch {
    return unsymbolized(frames);
  }
}

function unsymbolized(frames: readonly NativeFrameRef[]): SymbolizedFrame[] {
  return frames.map((f) => ({
    module: f.module ?? null,
    offset: f.offset,
    returnAddress: f.returnAddress ?? false,
    source: 'none',
    ...(f.pc !== undefined ? { pc: f.pc } : {}),
  }));
}
export { shortFunctionName } from './frame-lines';
