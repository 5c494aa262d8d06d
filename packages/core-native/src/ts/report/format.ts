// The one report formatter: renders an event as the text a user reads.
// Every line starts with `==mate-guard== `.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { demangleName } from '../symbolize/demangle';
import { formatNativeFrames } from '../symbolize/frame-lines';
import type { SymbolizedFrame } from '../symbolize/types';
import { isKernelException, type CanarySideDamage, type DeathInfo, type DeviceLaunch, type DeviceLaunchArg, type EventAllocation, type NativeStack, type ViolationEvent } from './event';
import { formatDroppedFrames, trimJsStack } from './js-stack';
import { rankText } from './device-place';
import { isNotice } from './notices';
import { formatOutOfMemory } from './out-of-memory';
import { suppressionLine } from './suppressions';

const REPORT_PREFIX = '==mate-guard== ';

const bytes = (n: number | bigint) => `${n} ${n === 1 || n === 1n ? 'byte' : 'bytes'}`;

const RELATION_TEXT = { 'past-end': 'past the end of', 'before-start': 'before the start of', inside: 'inside' } as const;

/** The canary side a report is about: before the start when damaged there, else past the end. */
function mainSide(e: ViolationEvent): { side: CanarySideDamage; before: boolean } {
  const d = e.damage!;
  return d.before.bytes !== 0 ? { side: d.before, before: true } : { side: d.after, before: false };
}

const isBadFree = (e: ViolationEvent) => e.kind === 'double-free' || e.kind === 'invalid-free';

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

/** A JS stack from the user's own frames on: the runner's, node's and ours are counted, not shown. */
function stackLines(title: string, stack: string | null, backend?: string): string[] {
  if (!stack) return [`${title} (no stack captured: ${backend === 'cuda' ? 'no JS or Python code was running on that thread, or captureStacks is off' : 'captureStacks is off'})`];
  const { frames, dropped } = trimJsStack(stack);
  const lines = frames.map((l) => `  ${l.replace(/^ +/, '')}`);
  if (dropped) lines.push(`  ${formatDroppedFrames(dropped)}`);
  return [`${title}:`, ...lines];
}

let runtime: string | undefined;
/** The Node binary's path (frames in it are the runtime calling the addon). */
function isRuntime(module: string | null | undefined): boolean {
  if (!module) return false;
  runtime ??= fs.realpathSync(process.execPath);
  return module === runtime || path.basename(module) === 'node';
}

/**
 * Native frames down to the first frame in the Node runtime (where it
 * called into the addon): the runtime's own frames below are not the user's.
 */
export function framesToRuntime<T extends { module?: string | null }>(frames: readonly T[]): T[] {
  const firstRuntime = frames.findIndex((f, i) => i > 0 && isRuntime(f.module));
  return firstRuntime < 0 ? [...frames] : frames.slice(0, firstRuntime + 1);
}

/** Native frames, sanitizer style, down to the runtime; the runtime's own frames below that are counted. */
function nativeLines(title: string, stack: NativeStack): string[] {
  const frames = stack.frames.map((f): SymbolizedFrame => ({ returnAddress: false, source: 'none', ...f, module: f.module ?? null }));
  const shown = framesToRuntime(frames);
  const lines = formatNativeFrames(shown).map((l) => `  ${l}`);
  const rest = frames.length - shown.length;
  if (rest) lines.push(`  … ${rest} more frame${rest === 1 ? '' : 's'} in the runtime`);
  return [`${title}:`, ...lines];
}

/**
 * Where an allocation or free happened: native frames (the native heap),
 * then the JS call into native code when there was one; else the JS stack.
 */
function siteLines(title: string, frames: NativeStack | null | undefined, stack: string | null, backend: string): string[] {
  if (!frames?.frames.length) return stackLines(title, stack, backend);
  // Native code called from JS: where in JS (none on the module's own threads).
  return [...nativeLines(title, frames), ...(stack ? stackLines('called from JS at', stack) : [])];
}

/** Where an allocation came from and who freed it. */
function historyLines(a: EventAllocation, firstFree = false): string[] {
  const lines: string[] = [];
  if (a.allocTest) lines.push(`allocated during test: ${a.allocTest}`);
  lines.push(...siteLines('allocated at', a.allocFrames, a.allocStack, a.backend));
  if (a.freed) {
    if (a.freeTest) lines.push(`freed during test: ${a.freeTest}`);
    if (a.freedBy === 'gc') lines.push('freed by the garbage collector: no JS reference to the buffer was left');
    else lines.push(...siteLines(firstFree ? 'first freed at' : 'freed at', a.freeFrames, a.freeStack, a.backend));
  }
  return lines;
}

const allocationLine = (a: EventAllocation, e?: ViolationEvent) =>
  `allocation #${a.id}: ${bytes(a.size)} at [${a.start}, ${a.end}), ${a.mode} mode, alignment ${a.alignment}, backend ${a.backend}${e?.device ? ` on device ${e.device.ordinal}` : ''} (${a.guardMethod})`;

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

function formatBadFree(e: ViolationEvent): string[] {
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

/** A module path as reports name it: relative to the working directory when inside it. */
function modulePath(module: string): string {
  const rel = path.relative(process.cwd(), module);
  return rel && !rel.startsWith('..') ? rel : module;
}

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
function formatAccess(e: ViolationEvent, a: EventAllocation): string[] {
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

const FREE_BYPASS_HINT = 'glibc was given a pointer it never allocated: free and realloc guarded memory through the module\'s own import (not a stored pointer to libc\'s function), or leave that module out of --guard-native';

/** Last: the suppression that matched it, or the line that would suppress it (ready to paste). */
function suppressionLines(e: ViolationEvent): string[] {
  const s = e.suppressed;
  if (s) {
    const outcome = e.fatal ? 'counted, not failed; a fault still ends its process' : 'counted, not failed';
    return [`suppressed by ${s.file}:${s.line} (${s.rule}): ${outcome}`];
  }
  // An out-of-memory is not a bug to suppress.
  const line = isNotice(e) ? undefined : suppressionLine(e);
  return line ? [`suppression: ${line}`] : [];
}

// CUDA device reports: an illegal address (CUDA's fault, reported with no
// address) and a cross-stream free.

/** A C++ kernel's name demangled where it can be; Triton's and C's are plain. */
const kernelName = (k: string | null) => (k ? demangleName(k) ?? k : '(unknown kernel)');

function streamName(stream: string): string {
  const v = BigInt(stream);
  if (v === 0n || v === 1n) return 'the default stream';
  if (v === 2n) return 'the per-thread default stream';
  return `stream ${stream}`;
}

const allocationBrief = (a: EventAllocation) =>
  `#${a.id} (${bytes(a.size)} at ${a.start}, ${a.mode} mode${a.freed ? ', freed: its range is unmapped' : ''})`;

/** The first user frame of a JS or Python stack, or undefined. */
function firstUserFrame(stack: string | null): string | undefined {
  return callSite(stack).user;
}

/** Code torch.compile generated (Inductor's cache of wrappers and kernels): not the user's. */
const GENERATED = /[\\/]torchinductor_[^\\/]+[\\/]/;

/**
 * A Python or JS call site: the user's own first frame, and for a
 * torch.compile'd function the generated code's frame it ran through.
 */
function callSite(stack: string | null): { user?: string; generated?: string; caller?: string } {
  if (!stack) return {};
  const frames = trimJsStack(stack).frames.filter((l) => l.trim().startsWith('at ')).map((l) => l.trim().replace(/^at /, ''));
  const own = frames.filter((f) => !GENERATED.test(f));
  const generated = frames.find((f) => GENERATED.test(f));
  // Through generated code the first own frame is the compiled function's
  // line (dynamo keeps its frame); the next is where it was called.
  return { user: own[0] ?? generated, generated: own.length ? generated : undefined, caller: generated ? own[1] : undefined };
}

/** The saved inputs of a launch (dumpInputs): whole paths (older events: under the report directory `dir`). */
function inputLines(l: DeviceLaunch, indent: string, dir: string | undefined): string[] {
  if (!l.inputs?.length) return [];
  const lines = [`${indent}  inputs saved before it ran (--guard-dump-inputs):`];
  for (const i of l.inputs) {
    const cut = i.saved < i.size ? `, the first ${bytes(i.saved)} (truncated at the cap)` : '';
    lines.push(`${indent}    argument ${i.param}: allocation #${i.allocation} (${bytes(i.size)}${cut}): ${path.isAbsolute(i.file) || !dir ? i.file : path.join(dir, i.file)}`);
  }
  return lines;
}

function launchLines(l: DeviceLaunch, indent: string, dir?: string): string[] {
  const lines = [`${indent}${kernelName(l.kernel)} (launch ${l.number} on ${streamName(l.stream)})`];
  const site = callSite(l.site);
  if (site.user) lines.push(`${indent}  launched at ${site.user}`);
  if (site.generated) lines.push(`${indent}  through torch.compile's generated code at ${site.generated}${site.caller ? `, called from ${site.caller}` : ''}`);
  if (l.test) lines.push(`${indent}  launched during test: ${l.test}`);
  if (l.argCount === 0) lines.push(`${indent}  no argument points into a guarded allocation`);
  // One line per pointer: a kernel given the same pointer in several
  // parameters (or seen twice for one) names them together.
  const byPointer = new Map<string, { where: string[]; arg: (typeof l.args)[number] }>();
  for (const arg of l.args) {
    const where = arg.offset ? `${arg.param} (at byte ${arg.offset} of it)` : `${arg.param}`;
    const key = `${arg.value}/${arg.allocation.id}`;
    const seen = byPointer.get(key);
    if (!seen) byPointer.set(key, { where: [where], arg });
    else if (!seen.where.includes(where)) seen.where.push(where);
  }
  for (const { where, arg } of byPointer.values()) {
    const off = BigInt(arg.value) - BigInt(arg.allocation.start);
    const rel = off === 0n ? '' : off > 0n ? ` + ${off}` : ` - ${-off}`;
    lines.push(`${indent}  ${where.length > 1 ? 'arguments' : 'argument'} ${where.join(', ')} = ${arg.value}: allocation ${allocationBrief(arg.allocation)}${rel ? `, pointer at its start${rel}` : ''}`);
  }
  if (l.argCount > l.args.length) lines.push(`${indent}  … ${l.argCount - l.args.length} more guarded pointer arguments`);
  lines.push(...inputLines(l, indent, dir));
  return lines;
}

/**
 * A pointer found inside a parameter larger than a pointer: a struct passed
 * by value (PyTorch's TensorListMetadata, a Triton descriptor), whose
 * unused slots may hold stale addresses the kernel never reads. Weaker
 * evidence than a pointer argument.
 */
const inStruct = (a: DeviceLaunchArg): boolean => (a.paramSize ?? 8) > 8;

const argPlace = (a: DeviceLaunchArg) => `parameter ${a.param}${a.offset ? ` at byte ${a.offset}` : ''}`;

/**
 * What can be told about which guard (or unmapped freed range) was hit:
 * "most likely" only where the evidence singles one out. Pointer arguments
 * count before pointers inside by-value structs; where one of each remains,
 * the line says so instead of guessing.
 */
function hitLine(suspects: readonly DeviceLaunch[]): string | undefined {
  const all = suspects.flatMap((l) => l.args.map((arg) => ({ l, arg })));
  const ids = (xs: typeof all) => new Set(xs.map((x) => x.arg.allocation.id));
  const direct = all.filter((x) => !inStruct(x.arg));
  const nested = all.filter((x) => inStruct(x.arg));
  const directFreed = direct.filter((x) => x.arg.allocation.freed);
  const directLive = direct.filter((x) => !x.arg.allocation.freed);
  const nestedFreed = nested.filter((x) => x.arg.allocation.freed);
  const what = (l: DeviceLaunch) => (l.faulted ? 'the faulting launch' : 'the launch in flight');
  const useAfterFree = (x: (typeof all)[number]) =>
    `the unmapped range of freed allocation #${x.arg.allocation.id}, passed to ${kernelName(x.l.kernel)} after it was freed${inStruct(x.arg) ? ` (inside a by-value struct, ${argPlace(x.arg)})` : ''} (use after free)`;
  const guardOf = (x: (typeof all)[number], only: string) => {
    const a = x.arg.allocation;
    const side = a.mode === 'tail' ? 'after the end' : 'before the start';
    return `the guard ${side} of allocation #${a.id}, ${only} (an ${a.mode === 'tail' ? 'overrun' : 'underrun'} of it)`;
  };
  if (ids(directFreed).size === 1) return `hit: most likely ${useAfterFree(directFreed[0])}`;
  if (directFreed.length > 0) return undefined;
  if (ids(directLive).size === 1 && (directLive.length === 1 || suspects.length === 1)) {
    const x = directLive[0];
    const only = nested.length
      ? `the only pointer passed as an argument (to ${kernelName(x.l.kernel)})`
      : `the only guarded pointer ${what(x.l)} was given`;
    if (!nestedFreed.length) return `hit: most likely ${guardOf(x, only)}`;
    return `hit: two explanations remain: ${guardOf(x, only)}, or ${useAfterFree(nestedFreed[0])}; a struct's stale slot is often never read: launch blocking tells them apart`;
  }
  if (direct.length === 0 && ids(nestedFreed).size === 1 && nested.length === nestedFreed.length) return `hit: most likely ${useAfterFree(nestedFreed[0])}`;
  if (direct.length === 0 && nested.length === 1 && suspects.length === 1) return `hit: most likely ${guardOf(nested[0], `the only guarded pointer ${what(nested[0].l)} was given (inside a by-value struct, ${argPlace(nested[0].arg)})`)}`;
  return undefined;
}

/** How to get the faulting launch's inputs on record, when they are not: --guard-dump-inputs with a glob for its kernel. */
function dumpHint(faulted: readonly DeviceLaunch[]): string {
  const kernel = faulted[0]?.kernel;
  if (!kernel || faulted.some((l) => l.inputs?.length)) return '';
  // `void ns::Kernel<T>(float*, long)` -> `*Kernel*`: matches the mangled and the demangled name alike.
  const name = kernelName(kernel).replace(/\(anonymous namespace\)::/g, '').replace(/<.*$/s, '').replace(/\(.*$/s, '').split('::').pop()?.trim().split(/\s+/).pop() ?? '';
  return name ? ` (--guard-dump-inputs '*${name}*' saves its inputs before each launch, to run it alone on them)` : '';
}

function formatKernelException(e: ViolationEvent): string[] {
  const d = e.device;
  const address = e.kind === 'illegal-address';
  const lines = [`ERROR: ${e.kind}: the GPU reported ${d?.error ?? 'CUDA_ERROR_ILLEGAL_ADDRESS'} (${d?.errorText ?? 'an illegal memory access was encountered'}) on device ${d?.ordinal ?? 0}${rankText(d)}, seen by ${d?.foundBy ?? 'the device guard'}`];
  if (e.test) lines.push(`test: ${e.test}`);
  const t = e.launches;
  const list = t?.list ?? [];
  const dir = e.file ? path.dirname(e.file) : undefined;
  const faulted = list.filter((l) => l.faulted);
  const suspects = faulted.length ? faulted : list.filter((l) => l.argCount > 0);
  if (faulted.length) {
    lines.push('the kernel that faulted (launch blocking: its own synchronize returned the error):');
    for (const l of faulted) lines.push(...launchLines(l, '  ', dir));
  } else if (t?.tracking && list.length) {
    lines.push(`kernels launched since the last synchronize, not known to have finished (${t.total}${t.total > list.length ? `, the newest ${list.length}` : ''}, newest first): one of them ${address ? 'made the bad access' : 'raised it'}`);
    for (const l of list) lines.push(...launchLines(l, '  ', dir));
  } else if (t?.tracking) {
    lines.push('no kernel launch was in flight that launch tracking saw');
  } else {
    lines.push(`the faulting kernel is not known: launch tracking was off${t?.off ? ` (${t.off})` : ''}`);
  }
  const hit = address ? hitLine(suspects) : undefined;
  if (hit) lines.push(hit);
  const c = address ? e.candidates : undefined;
  if (c && !suspects.length) {
    lines.push(`guarded allocations live on device ${d?.ordinal ?? 0} (${c.live.length} of ${c.liveTotal}, newest first):`);
    for (const a of c.live) {
      lines.push(`  ${allocationBrief(a)}${a.allocTest ? `, allocated during test: ${a.allocTest}` : ''}`);
      const at = firstUserFrame(a.allocStack);
      if (at) lines.push(`    allocated at ${at}`);
    }
  }
  // A stale address reaches a kernel as often by arithmetic on a live
  // pointer as by a freed argument: the freed ranges are named either way,
  // with where each was allocated and freed.
  if (c?.freed.length && !suspects.some((l) => l.args.some((a) => a.allocation.freed))) {
    lines.push('freed allocations whose ranges are unmapped (a stale address into one faults; newest first):');
    for (const a of c.freed) {
      lines.push(`  ${allocationBrief(a)}`);
      const at = firstUserFrame(a.allocStack);
      if (at) lines.push(`    allocated at ${at}`);
      const freedAt = firstUserFrame(a.freeStack);
      lines.push(`    freed at ${freedAt ?? '(no stack captured)'}`);
    }
  }
  const exact = faulted.length > 0;
  if (!address) {
    const what = e.kind === 'device-assert'
      ? 'a device-side assert failed (an index or bounds check in the kernel: CUDA printed its condition, file and line before this report)'
      : `the kernel raised ${d?.error ?? 'a CUDA exception'}, not a guarded access`;
    lines.push(`hint: ${what}; ${exact ? 'the kernel above is the one' : 'rerun with launch blocking (--guard-launch-blocking, mate guard-run --launch-blocking) to name the launch exactly'}`);
    return lines;
  }
  lines.push(`hint: ${exact
    ? `CUDA reports no faulting address: the access went past the guarded allocations the kernel was given (or into a freed one); check its index bounds${dumpHint(faulted)}`
    : `CUDA reports the fault at a later call, with no address: rerun with launch blocking (--guard-launch-blocking, mate guard-run --launch-blocking) to name the faulting launch exactly, or in the opposite mode (${e.candidates?.live[0]?.mode === 'head' ? '--guard-mode tail' : '--guard-mode head'}) so the bad write lands in canary bytes and the report names its allocation`}`);
  return lines;
}

function formatCrossStreamFree(e: ViolationEvent, a: EventAllocation): string[] {
  const st = e.streams!;
  const lines = [
    `ERROR: cross-stream-free: allocation #${a.id} (${bytes(a.size)}, ${a.mode} mode) freed on ${streamName(st.free)} while a kernel on ${streamName(st.use)} used it and the free was not ordered after that use`,
  ];
  if (e.test) lines.push(`test: ${e.test}`);
  if (st.useLaunch) {
    lines.push('the use:');
    lines.push(...launchLines(st.useLaunch, '  '));
  }
  lines.push(allocationLine(a, e), ...historyLines(a));
  lines.push(`hint: make ${streamName(st.free)} wait for ${streamName(st.use)}'s work before freeing (record an event on it after the use and wait on it: cudaStreamWaitEvent, torch.cuda.current_stream().wait_stream(s)), synchronize, or declare the use (Tensor.record_stream(s), mate_guard_record_stream); mate-guard delayed this free until that work was done, so nothing was corrupted in this run`);
  return lines;
}

// Deaths that are no guard fault: a deadly signal (SIGABRT, SIGSEGV outside
// guarded memory, ...) or an uncaught C++ exception.

/** `SIGABRT` for 6 (this platform's numbering, as the dying process's). */
export function signalName(n: number): string {
  const found = Object.entries(os.constants.signals).find(([, v]) => v === n);
  return found ? found[0] : `signal ${n}`;
}

/** What si_code says, per signal (Linux). */
const CODE_TEXT: Record<string, Record<number, string>> = {
  SIGSEGV: { 1: 'address not mapped', 2: 'no permission for the access' },
  SIGBUS: { 1: 'misaligned address', 2: 'nonexistent physical address', 3: 'hardware error on a mapped object (a file truncated under a mapping?)' },
  SIGILL: { 1: 'illegal opcode', 2: 'illegal operand', 3: 'illegal addressing mode', 4: 'illegal trap', 5: 'privileged opcode', 6: 'privileged register', 7: 'coprocessor error', 8: 'internal stack error' },
  SIGFPE: { 1: 'integer divide by zero', 2: 'integer overflow', 3: 'floating-point divide by zero', 4: 'floating-point overflow', 5: 'floating-point underflow', 6: 'floating-point inexact result', 7: 'invalid floating-point operation', 8: 'subscript out of range' },
  SIGTRAP: { 1: 'breakpoint', 2: 'trace trap' },
};

/** How far `address` is past the last `alignment` boundary. */
const offBoundary = (address: string, alignment: number) => Number(BigInt(address) % BigInt(alignment));

/** How the signal came: the kernel's reason, or who sent it. */
function signalCause(d: DeathInfo, pid: number): string {
  const name = signalName(d.signal);
  if (d.code > 0 && d.code !== 0x80) return CODE_TEXT[name]?.[d.code] ?? `si_code ${d.code}`;
  if (d.code === 0x80 && d.misaligned) {
    const m = d.misaligned;
    const off = offBoundary(m.address, m.alignment);
    return `a general-protection fault: ${m.instruction} needs ${m.alignment}-byte aligned memory and was given ${m.address}, ${off} ${off === 1 ? 'byte' : 'bytes'} past a ${m.alignment}-byte boundary`;
  }
  if (d.code === 0x80) return name === 'SIGSEGV' || name === 'SIGBUS' ? 'a general-protection fault: a non-canonical pointer, an aligned SSE/AVX access of a misaligned address, or a privileged instruction; the kernel gives no address' : 'raised by the kernel';
  if (d.sender === pid) return name === 'SIGABRT' ? 'abort(): a failed assert, a library\'s fatal check, or abort() called directly' : 'raised by the process itself';
  return `sent by process ${d.sender ?? 'unknown'}${d.code === 0 ? ' (kill)' : ''}`;
}

function deathHeadline(e: ViolationEvent, d: DeathInfo): string {
  if (e.kind === 'uncaught-exception' && d.exception) {
    const what = d.exception.what !== null ? `: ${JSON.stringify(d.exception.what)}` : '';
    return `ERROR: uncaught-exception: ${d.exception.type}${what} (no frame caught it: std::terminate, then ${signalName(d.signal)})`;
  }
  const name = signalName(d.signal);
  const access = d.access && d.access !== 'ACCESS' ? ` on ${d.access}` : '';
  // SI_KERNEL faults carry no address (si_addr is 0).
  const at = d.address && d.code !== 0x80 ? `${access} at ${d.address}` : '';
  const outside = (name === 'SIGSEGV' || name === 'SIGBUS') && d.code > 0 && d.code !== 0x80 ? ', outside guarded memory' : '';
  return `ERROR: deadly-signal: ${name}${at} (${signalCause(d, e.pid)})${outside}: the process dies`;
}

/** What mate-guard knows about it, beyond the signal. */
function deathFacts(e: ViolationEvent, d: DeathInfo): string[] {
  const lines: string[] = [];
  if (d.abortMessage) lines.push(`glibc: ${d.abortMessage.trim()}`);
  const f = d.guardedFree;
  if (f && e.allocation) {
    const frames = e.accessStack?.frames ?? [];
    const caller = frames.slice(f.frame + 1).find((fr) => fr.module) ?? frames[f.frame + 1];
    const module = caller?.module ? modulePath(caller.module) : 'an unknown module';
    lines.push(`mate-guard: ${f.function}() of a pointer mate-guard allocated (${f.pointer}, allocation #${e.allocation.id}), called from a module or by a path that is not redirected: ${module} (frame #${f.frame + 1} called ${f.function} directly, not through an import the free router rewrote: a stored pointer to libc's ${f.function}, or code linked statically)`);
  }
  return lines;
}

/** The module of the first native frame of the dying stack. */
const topModule = (e: ViolationEvent): string | undefined => e.accessStack?.frames.find((f) => f.module)?.module ?? undefined;

/** A misaligned SSE/AVX access: whose memory it was and what to do. */
function misalignedHint(e: ViolationEvent, m: NonNullable<DeathInfo['misaligned']>): string {
  const a = e.allocation;
  if (a && a.alignment < m.alignment) {
    const why = a.backend === 'native-heap'
      ? `the native heap placed its ${a.size}-byte allocations byte-exact (--guard-native-exact-size=${a.size}, as a rerun after gap damage does), which code that needs them ${m.alignment}-byte aligned cannot run with: leave that setting off for a size such code allocates`
      : `mate-guard placed it with alignment ${a.alignment} (--guard-alignment), which code that needs ${m.alignment}-byte alignment cannot run with: raise the alignment to ${m.alignment}`;
    return `${m.instruction} was given allocation #${a.id}, which mate-guard placed ${a.alignment}-byte aligned: ${why}; this death is the placement's, not a bug of the program`;
  }
  const whose = a ? `allocation #${a.id} (mate-guard's, ${a.alignment}-byte aligned; the address is inside it)` : 'memory mate-guard did not allocate';
  return `the code at the top of the stack assumed ${m.alignment}-byte alignment of ${whose}: a pointer offset from an aligned start, or memory from an allocator that promises less; the stack shows where`;
}

function deathHint(e: ViolationEvent, d: DeathInfo): string {
  if (e.kind === 'uncaught-exception') {
    return 'a C++ exception left native code uncaught (thrown through Node\'s frames, from a noexcept function or on a thread): catch it where it is thrown and turn it into a JS error (Napi::Error, napi_throw_error)';
  }
  if (d.guardedFree) return FREE_BYPASS_HINT;
  if (d.misaligned) return misalignedHint(e, d.misaligned);
  const name = signalName(d.signal);
  const heap = e.nativeHeap;
  const guarding = heap ? ` (its native heap guard covers ${heap.globs.map((g) => JSON.stringify(g)).join(', ')})` : '';
  if (name === 'SIGABRT' && d.abortMessage && /free|malloc|realloc|chunk|corrupted|tcache|heap/i.test(d.abortMessage)) {
    return heap
      ? `glibc found its heap damaged: memory mate-guard does not guard was overrun or freed twice${guarding}: another module's memory, or an allocation sampled out; add the module that allocates it to --guard-native, at sample rate 1, so the first bad access faults`
      : 'glibc found its heap damaged: memory mate-guard does not guard (another module\'s, or sampled out) was overrun or freed twice; add the module that allocates it to --guard-native (sample rate 1) so the first bad access faults';
  }
  if ((name === 'SIGSEGV' || name === 'SIGBUS') && d.code > 0 && d.code !== 0x80) {
    const top = topModule(e);
    if (heap && top && heap.modules.includes(top)) {
      return `the access was outside guarded memory, and ${modulePath(top)}'s heap is guarded already: the pointer is none of its guarded allocations (a wild, null or stale pointer, memory of another module or of its own allocator, or an allocation sampled out); the stack shows where`;
    }
    if (heap) return `the access was outside guarded memory: a wild or null pointer, or memory mate-guard does not guard${guarding}; the stack shows where. Add the module whose memory it is to --guard-native so its overruns fault at the first bad byte`;
    return 'the access was outside guarded memory: a wild or null pointer, or memory mate-guard does not guard; the stack shows where. Guard the module\'s heap (--guard-native) so its overruns fault at the first bad byte';
  }
  if (d.code === 0x80 && (name === 'SIGSEGV' || name === 'SIGBUS')) {
    return 'a general-protection fault is no guard-page fault: the instruction at the top of the stack used a non-canonical pointer (a garbage or freed-and-reused pointer\'s high bits), an aligned access of a misaligned address, or a privileged instruction; the stack shows where';
  }
  return `the process died by ${name}; the stack shows where`;
}

function formatDeath(e: ViolationEvent, d: DeathInfo): string[] {
  const lines = [deathHeadline(e, d)];
  if (e.test) lines.push(`test: ${e.test}`);
  lines.push(...deathFacts(e, d));
  if (e.accessStack?.frames.length) lines.push(...nativeLines('stack', e.accessStack));
  if (e.allocation) lines.push(allocationLine(e.allocation, e), ...historyLines(e.allocation));
  lines.push(`hint: ${deathHint(e, d)}`);
  return lines;
}

/** The report of one event. */
export function formatReport(e: ViolationEvent): string {
  let lines: string[];
  if (e.death) lines = formatDeath(e, e.death);
  else if (isKernelException(e)) lines = formatKernelException(e);
  else if (e.kind === 'out-of-memory' && e.memory) lines = formatOutOfMemory(e, e.memory);
  else if (e.kind === 'cross-stream-free' && e.allocation && e.streams) lines = formatCrossStreamFree(e, e.allocation);
  else lines = isBadFree(e) || !e.allocation ? formatBadFree(e) : formatAccess(e, e.allocation);
  lines.push(...suppressionLines(e));
  return lines.map((l) => REPORT_PREFIX + l + '\n').join('');
}
