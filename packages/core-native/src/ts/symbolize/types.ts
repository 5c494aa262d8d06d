// Native frames in and out of symbolization.

/** One native frame as a report event carries it. */
export interface NativeFrameRef {
  /** Absolute path of the ELF object; null/undefined when no module mapped the pc. */
  module?: string | null;
  /**
   * pc minus the module's load bias: the link-time virtual address that
   * addr2line, llvm-symbolizer and the ELF symbol tables use (and that
   * sanitizers print as `module+0xoffset`). The pc itself when the module
   * is unknown.
   */
  offset: number;
  /** The raw pc, for printing frames of unknown modules. */
  pc?: number | string;
  /**
   * The pc is a return address (every frame but a fault's frame 0): the
   * call is the instruction before it, so it is symbolized at offset - 1.
   */
  returnAddress?: boolean;
}

export interface SourceLocation {
  /** Demangled function name, as the tool gave it (parameters included). */
  function?: string;
  /** Source file, as recorded in the debug info (usually absolute). */
  file?: string;
  line?: number;
  column?: number;
}

/** Where the symbol came from: what was on PATH and what the module had. */
export type SymbolSource = 'llvm-symbolizer' | 'addr2line' | 'elf-symbols' | 'none';

export interface SymbolizedFrame extends SourceLocation {
  module: string | null;
  offset: number;
  pc?: number | string;
  returnAddress: boolean;
  /**
   * Present when the code at this address was inlined: the functions it was
   * inlined into, from the nearest caller out to the function the machine
   * frame belongs to. The frame's own fields are the innermost location.
   */
  inlined?: SourceLocation[];
  source: SymbolSource;
}

export interface SymbolizeOptions {
  /** The whole symbolization's time bound (default 5000 ms). */
  timeoutMs?: number;
  /** Where tools are looked up (default: process.env.PATH). */
  path?: string;
  /** Skip or pin a tool: a path to use it from there, false to never use it. */
  tools?: { llvmSymbolizer?: string | false; addr2line?: string | false };
  /** Reuse and fill the per-process cache (default true). */
  cache?: boolean;
}
