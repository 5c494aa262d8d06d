// Function names from an ELF object's own symbol tables (.symtab, else
// .dynsym), for when no symbolizer tool is installed. Names only (no
// lines), possibly mangled. Addresses are link-time virtual addresses, the
// same as a frame's offset (pc - load bias), for executables, PIE and
// shared objects alike.
import * as fs from 'node:fs';

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_FUNC = 2;
const STT_GNU_IFUNC = 10;
const SHN_UNDEF = 0;
const STB_LOCAL = 0;
// Past this a table is not worth reading for a report (node's own is ~8 MiB).
const MAX_TABLE_BYTES = 256 * 1024 * 1024;

interface Section {
  type: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

export interface ElfFunction {
  name: string;
  start: number;
  size: number;
}

/** The function symbols of one object, sorted by address. */
export class ElfFunctionTable {
  constructor(
    private readonly starts: Float64Array,
    private readonly sizes: Float64Array,
    private readonly nameOffsets: Uint32Array,
    private readonly strings: Buffer,
  ) {}

  get size(): number {
    return this.starts.length;
  }

  /** The function whose [start, start + size) holds `address`. */
  lookup(address: number): ElfFunction | undefined {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid] <= address) lo = mid + 1;
      else hi = mid;
    }
    // Nearest starts at or below; a few back in case a small symbol sits
    // inside a bigger one. A symbol that does not cover the address (the
    // address is in a function with no symbol, e.g. a stripped local one)
    // is no answer: naming a neighbour would be worse than none.
    for (let i = lo - 1; i >= 0 && i >= lo - 8; i--) {
      const start = this.starts[i];
      const size = this.sizes[i];
      if (address < start + size || (size === 0 && address === start)) {
        return { name: cString(this.strings, this.nameOffsets[i]), start, size };
      }
    }
    return undefined;
  }
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, offset + done);
    if (n <= 0) throw new Error('short read');
    done += n;
  }
  return buf;
}

function cString(buf: Buffer, at: number): string {
  if (at >= buf.length) return '';
  const end = buf.indexOf(0, at);
  return buf.toString('utf8', at, end < 0 ? buf.length : end);
}

/**
 * Reads the function symbols of the ELF file at `file`; undefined when it
 * is not an ELF object, cannot be read, or has no function symbols.
 */
export function readElfFunctions(file: string): ElfFunctionTable | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    return readTable(fd);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function readTable(fd: number): ElfFunctionTable | undefined {
  const ident = readAt(fd, 0, 64);
  if (ident.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const is64 = ident[4] === 2;
  const le = ident[5] === 1;
  const u16 = (b: Buffer, o: number): number => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number): number => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const addr = (b: Buffer, o: number): number =>
    is64 ? Number(le ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o)) : u32(b, o);

  const shoff = addr(ident, is64 ? 0x28 : 0x20);
  const shentsize = u16(ident, is64 ? 0x3a : 0x2e);
  let shnum = u16(ident, is64 ? 0x3c : 0x30);
  if (shoff === 0 || shentsize < (is64 ? 64 : 40)) return undefined;
  if (shnum === 0) shnum = Number(addr(readAt(fd, shoff, shentsize), is64 ? 0x20 : 0x14)); // extended numbering
  if (shnum === 0 || shnum > 65536 * 4) return undefined;
  const headers = readAt(fd, shoff, shnum * shentsize);
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = i * shentsize;
    sections.push(
      is64
        ? { type: u32(headers, o + 4), offset: addr(headers, o + 0x18), size: addr(headers, o + 0x20), link: u32(headers, o + 0x28), entsize: addr(headers, o + 0x38) }
        : { type: u32(headers, o + 4), offset: u32(headers, o + 0x10), size: u32(headers, o + 0x14), link: u32(headers, o + 0x18), entsize: u32(headers, o + 0x24) },
    );
  }
  // .symtab has everything .dynsym has and the local functions too.
  const table = sections.find((s) => s.type === SHT_SYMTAB) ?? sections.find((s) => s.type === SHT_DYNSYM);
  if (!table || table.size === 0 || table.size > MAX_TABLE_BYTES) return undefined;
  const strtab = sections[table.link];
  if (!strtab || strtab.size > MAX_TABLE_BYTES) return undefined;
  const syms = readAt(fd, table.offset, table.size);
  const strings = readAt(fd, strtab.offset, strtab.size);
  const entsize = table.entsize || (is64 ? 24 : 16);

  const found: Array<{ start: number; size: number; name: number; local: boolean }> = [];
  for (let o = 0; o + entsize <= syms.length; o += entsize) {
    const info = syms[is64 ? o + 4 : o + 12];
    const type = info & 0xf;
    if (type !== STT_FUNC && type !== STT_GNU_IFUNC) continue;
    const shndx = u16(syms, is64 ? o + 6 : o + 14);
    if (shndx === SHN_UNDEF) continue;
    const start = addr(syms, is64 ? o + 8 : o + 4);
    const size = addr(syms, is64 ? o + 16 : o + 8);
    if (start === 0) continue;
    found.push({ start, size, name: u32(syms, o), local: info >> 4 === STB_LOCAL });
  }
  if (found.length === 0) return undefined;
  // Aliases share an address: keep one, a global name before a local one.
  found.sort((a, b) => a.start - b.start || Number(a.local) - Number(b.local));
  const kept = found.filter((s, i) => i === 0 || s.start !== found[i - 1].start);
  return new ElfFunctionTable(
    Float64Array.from(kept, (s) => s.start),
    Float64Array.from(kept, (s) => s.size),
    Uint32Array.from(kept, (s) => s.name),
    strings,
  );
}
