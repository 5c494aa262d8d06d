// What the two symbolizer tools print, turned into source locations.
import type { SourceLocation } from './types';

/** A tool's "don't know" spellings become absent fields. */
export function locationOf(fn: string, where: string): SourceLocation {
  const loc: SourceLocation = {};
  if (fn && fn !== '??') loc.function = fn;
  // file:line:column (llvm-symbolizer) or file:line [(discriminator N)]
  // (addr2line); the file itself may contain ':'.
  const m = /^(.*?):(\d+|\?)(?::(\d+))?(?: \(discriminator \d+\))?$/.exec(where.trim());
  const file = m ? m[1] : where.trim();
  if (file && file !== '??') loc.file = file;
  const line = m ? Number(m[2]) : NaN;
  if (loc.file && line > 0) {
    loc.line = line;
    const column = m?.[3] ? Number(m[3]) : 0;
    if (column > 0) loc.column = column;
  }
  return loc;
}

/** A location that says nothing is no location. */
export function isEmpty(loc: SourceLocation): boolean {
  return loc.function === undefined && loc.file === undefined;
}

/**
 * llvm-symbolizer's LLVM output style: per input line, pairs of
 * (function, file:line:column) lines, innermost inlined frame first, then
 * one empty line. Undefined when the block count does not match.
 */
export function parseLlvmSymbolizer(stdout: string, count: number): SourceLocation[][] | undefined {
  const blocks = stdout.replace(/\n+$/, '').split(/\n\n/);
  if (count === 0) return [];
  if (blocks.length !== count) return undefined;
  return blocks.map((block) => {
    const lines = block.split('\n');
    const locs: SourceLocation[] = [];
    for (let i = 0; i + 1 < lines.length; i += 2) locs.push(locationOf(lines[i], lines[i + 1]));
    return locs;
  });
}

/**
 * `addr2line -a -f -i` output: per address a `0x<hex>` line, then pairs of
 * (function, file:line), innermost first. Keyed by address.
 */
export function parseAddr2line(stdout: string): Map<number, SourceLocation[]> {
  const out = new Map<number, SourceLocation[]>();
  let current: SourceLocation[] | undefined;
  const lines = stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^0x[0-9a-f]+$/i.test(line)) {
      current = [];
      out.set(Number.parseInt(line, 16), current);
    } else if (current && line !== '' && i + 1 < lines.length) {
      current.push(locationOf(line, lines[i + 1]));
      i++;
    }
  }
  return out;
}
