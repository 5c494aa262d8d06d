// Native frames (module + offset) to function and file:line, and C++ names
// demangled: the native core's one symbolizer (src/native/report/symbolizer.h:
// llvm-symbolizer, else addr2line, else the module's ELF symbols, bounded in
// time, cached per process), as the crash printer and Python use it. Never
// throws: a missing tool, module or symbol just leaves a frame less named.
import { loadNative } from '../install/native';
import type { NativeFrameRef, SymbolizedFrame, SymbolizeOptions } from './types';

export type { NativeFrameRef, SourceLocation, SymbolizedFrame, SymbolizeOptions, SymbolSource } from './types';

/** The frames symbolized (each gets `source`; frames that had one are left as they were). */
export function symbolizeFramesSync(
  frames: readonly NativeFrameRef[],
  options: SymbolizeOptions = {},
): SymbolizedFrame[] {
  const out = loadNative().symbolizeFrames(JSON.stringify(frames), {
    ...(options.path !== undefined ? { path: options.path } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.tools?.llvmSymbolizer !== undefined ? { llvmSymbolizer: options.tools.llvmSymbolizer } : {}),
    ...(options.tools?.addr2line !== undefined ? { addr2line: options.tools.addr2line } : {}),
    ...(options.cache !== undefined ? { cache: options.cache } : {}),
  });
  return JSON.parse(out) as SymbolizedFrame[];
}

/** Forgets every cached symbol. */
export function clearSymbolCache(): void {
  loadNative().clearSymbolCache();
}

/** C++ names demangled (a name that is none stays out), for names that are not frames: CUDA kernels' names. */
export function demangleNamesSync(names: readonly string[]): Map<string, string> {
  const mangled = [...new Set(names.filter((n) => n.startsWith('_Z')))];
  const out = new Map<string, string>();
  if (!mangled.length) return out;
  loadNative()
    .demangleNames(mangled)
    .forEach((d, i) => {
      if (d && d !== mangled[i]) out.set(mangled[i], d);
    });
  return out;
}
