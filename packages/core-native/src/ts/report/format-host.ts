// Host reports (JS buffers and the native heap): an access past, before or
// after an allocation (a fault or canary damage) and a bad free.
import * as path from 'node:path';

import type { CanarySideDamage, EventAllocation, ViolationEvent } from './event';
import { allocationLine, bytes, historyLines, modulePath, nativeLines, RELATION_TEXT } from './format-shared';

/** The canary side a report is about: before the start when damaged there, else past the end. */
function mainSide(e: ViolationEvent): { side: CanarySideDamage; before: boolean } {
  const d = e.damage!;
  return d.before.bytes !== 0 ? { side: d.before, before: true } : { side: d.after, before: false };
}

export const isBadFree = (e: ViolationEvent) => e.kind === 'double-free' || e.kind === 'invalid-free';

function headline(e: ViolationEvent, a: EventAllocation): string {
  let out = `ERROR: ${e.kind}`;
  if (e.damage) {
    const { side, before } = mainSide(e);
    out += `: ${bytes(side.farthest)} ${before ? 'before the start of' : 'past the end of'}`;
  } else if (e.access) {
    const where = e.relation === 'inside' ? `offset ${e.distance}` : bytes(e.distance ?? 0);
    out += ` on ${e.access} at ${e.address}: ${where} ${RELATION_TEXT[e.relation ?? 'inside']}${a.freed ? ' freed' : ''}`;
  }
  out += ` allocation #${a.id} (${bytes(a.size)}, ${a.mode} mode)${e.damage ? ' damaged' : ''}`;
  return out;
}

function damageLines(e: ViolationEvent): string[] {
  const out: string[] = [];
  for (const [side, where] of [[e.damage!.before, 'before the start'], [e.damage!.after, 'past the end']] as const) {
    if (!side.bytes) continue;
    const extent = side.nearest === side.farthest ? bytes(side.farthest) : `from ${side.nearest} to ${bytes(side.farthest)}`;
    out.push(`damaged: ${bytes(side.bytes)}, ${extent} ${where}`);
  }
  return out;
}

interface Part { label: string; start: bigint; end: bigint }

/** One row of boxes, one per part of the slot, and a row marking the part that was hit. */
function picture(e: ViolationEvent, a: EventAllocation): string[] {
  const [cbS, cbE] = a.slot.canaryBefore.map(BigInt);
  const [caS, caE] = a.slot.canaryAfter.map(BigInt);
  const [gS, gE] = a.slot.guard.map(BigInt);
  const user = BigInt(a.start);
  const userEnd = BigInt(a.end);
  const parts: Part[] = [];
  const add = (label: string, start: bigint, end: bigint, always: boolean) => {
    if (always || end > start) parts.push({ label, start, end });
  };
  if (a.mode === 'tail') {
    add('canary', cbS, cbE, false);
    add('data', user, userEnd, true);
    add('gap (canary)', caS, caE, false);
    add('GUARD', gS, gE, true);
  } else {
    add('GUARD', gS, gE, true);
    add('data', user, userEnd, true);
    add('canary', caS, caE, false);
  }
  let row = '';
  const cols: Array<[number, number]> = [];
  for (const p of parts) {
    row += '|';
    const start = row.length;
    row += ` ${p.label} ${p.end - p.start} B `;
    row = row.padEnd(start + 14);
    cols.push([start, row.length]);
  }
  row += '|';
  const lines = [`slot: ${row}`];
  let lo = BigInt(e.address ?? 0);
  let hi = lo + 1n;
  if (e.damage) {
    const { side, before } = mainSide(e);
    if (before) [lo, hi] = [user - BigInt(side.farthest), user - BigInt(side.nearest) + 1n];
    else [lo, hi] = [userEnd + BigInt(side.nearest) - 1n, userEnd + BigInt(side.farthest)];
  }
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const inside = lo >= p.start && lo < p.end;
    if (!inside && !(i === parts.length - 1 && lo >= p.end) && !(i === 0 && lo < p.start)) continue;
    const [colStart, colEnd] = cols[i];
    const width = BigInt(colEnd - colStart);
    const span = p.end - p.start;
    let off = 0n;
    if (span > 0n && inside) off = ((lo - p.start) * (width - 1n)) / span;
    else if (lo >= p.end) off = width - 1n;
    const extra = hi > lo + 1n ? hi - lo - 1n : 0n;
    const tilde = '~'.repeat(Number(extra < 8n ? extra : 8n));
    lines.push(`${' '.repeat(6 + colStart + Number(off))}^${tilde} ${e.damage ? 'damaged canary' : e.access ?? ''}`);
    break;
  }
  return lines;
}

/** A double or invalid free (the native heap): what was freed, relative to what. */
function badFreeHeadline(e: ViolationEvent): string {
  const a = e.allocation;
  const head = `ERROR: ${e.kind} of ${e.address}: `;
  if (!a) return `${head}not the start of any allocation (an address inside mate-guard's guarded region)`;
  const size = `(${bytes(a.size)}, ${a.mode} mode)`;
  if (e.kind === 'double-free') return `${head}allocation #${a.id} ${size} was already freed`;
  if (e.address === a.start) {
    const js = a.backend === 'host';
    return `${head}the start of ${a.freed ? 'freed ' : ''}${js ? 'JS buffer allocation' : 'allocation'} #${a.id} ${size}${js ? ', which malloc/new never handed out' : ''}`;
  }
  const where = e.relation === 'inside' ? `offset ${e.distance}` : bytes(e.distance ?? 0);
  return `${head}${where} ${RELATION_TEXT[e.relation ?? 'inside']} ${a.freed ? 'freed ' : ''}allocation #${a.id} ${size}, not its start`;
}

export function formatBadFree(e: ViolationEvent): string[] {
  const twice = e.kind === 'double-free';
  const lines = [badFreeHeadline(e)];
  if (e.test) lines.push(`test: ${e.test}`);
  if (e.accessStack?.frames.length) lines.push(...nativeLines(twice ? 'freed again at' : 'free called at', e.accessStack));
  if (e.allocation) lines.push(allocationLine(e.allocation, e), ...historyLines(e.allocation, twice));
  lines.push(`hint: ${twice
    ? 'the memory was freed twice; mate-guard ignored the second free (it would corrupt a real heap): free each allocation once'
    : 'free/delete must get exactly the pointer malloc/new returned; mate-guard ignored this free'}`);
  return lines;
}

function hint(e: ViolationEvent, a: EventAllocation): string {
  const tail = a.mode === 'tail';
  if (e.damage) {
    const { before } = mainSide(e);
    if (before && tail) return 'canary damaged before the start in tail mode: rerun with --guard-mode head to fault at the first bad access';
    if (!before && !tail) return 'canary damaged past the end in head mode: rerun with --guard-mode tail to fault at the first bad access';
    if (a.backend === 'native-heap') {
      // The native heap keeps malloc's 16-byte alignment whatever `alignment` says: only this size goes byte-exact.
      return `the write landed in the gap malloc's ${a.alignment}-byte alignment leaves: rerun with the native heap's ${a.size}-byte allocations placed byte-exact to fault at the first bad access (--guard-native-exact-size=${a.size}, mate guard-run --native-exact-size ${a.size}, or installGuardAllocator({ nativeExactSize: ${a.size} }))`;
    }
    return `the write landed in the alignment gap (alignment ${a.alignment}): rerun byte-exact to fault at the first bad access (alignment 1: --guard-alignment=1, mate guard-run --alignment 1, or installGuardAllocator({ alignment: 1 }))`;
  }
  if (a.freed) {
    return a.freedBy === 'gc'
      ? 'the buffer was garbage-collected while native code still held a pointer into it: keep a reference to it (napi_ref / Napi::Reference) for as long as native code uses the memory'
      : 'the memory was used after it was freed: the stale pointer outlived the allocation';
  }
  if (e.relation === 'past-end') return 'native code accessed past the end: check the length it was given (buffer.length / byteLength) and its loop bounds';
  return 'native code accessed before the start: check negative indexes and pointer arithmetic';
}

const LIBC_FREE = /^(__libc_)?(c?free|realloc|reallocarray|malloc_usable_size)$/;

/**
 * libc's free/realloc faulting on the 8 or 16 bytes before a guarded
 * allocation (its chunk header, in the guard page in head mode): it was
 * given a pointer mate-guard allocated, by a call the free router did not see.
 */
function libcFreeOfGuarded(e: ViolationEvent): { fn: string; caller: string } | undefined {
  const frames = e.accessStack?.frames ?? [];
  const f0 = frames[0];
  const fn = f0?.function?.replace(/\(.*$/, '');
  if (!fn || !LIBC_FREE.test(fn) || !f0.module || !/^libc[.-]/.test(path.basename(f0.module))) return undefined;
  if (e.relation !== 'before-start' || (e.distance !== 8 && e.distance !== 16)) return undefined;
  const caller = frames.slice(1).find((f) => f.module && f.module !== f0.module)?.module;
  return { fn: fn.replace(/^__libc_|^c(?=free)/g, ''), caller: caller ? modulePath(caller) : 'an unknown module' };
}

/** A bad access (fault) or canary damage: what was hit, where, and the slot. */
export function formatAccess(e: ViolationEvent, a: EventAllocation): string[] {
  const lines = [headline(e, a)];
  if (e.test) lines.push(`test: ${e.test}`);
  const bypass = libcFreeOfGuarded(e);
  if (bypass) {
    lines.push(`mate-guard: libc's ${bypass.fn}() was given allocation #${a.id}, a pointer mate-guard allocated, and read its heap header before the start; called from a module or by a path that is not redirected: ${bypass.caller} (not through an import the free router rewrote: a stored pointer to libc's ${bypass.fn}, or code linked statically)`);
  }
  if (e.accessStack?.frames.length) lines.push(...nativeLines('access', e.accessStack));
  lines.push(allocationLine(a, e));
  if (e.damage) lines.push(...damageLines(e));
  lines.push(...picture(e, a), ...historyLines(a), `hint: ${bypass ? FREE_BYPASS_HINT : hint(e, a)}`);
  return lines;
}

export const FREE_BYPASS_HINT = 'glibc was given a pointer it never allocated: free and realloc guarded memory through the module\'s own import (not a stored pointer to libc\'s function), or leave that module out of --guard-native';
