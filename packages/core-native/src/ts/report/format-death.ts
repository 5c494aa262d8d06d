// Deaths that are no guard fault: a deadly signal (SIGABRT, SIGSEGV outside
// guarded memory, ...) or an uncaught C++ exception.
import * as os from 'node:os';

import type { DeathInfo, ViolationEvent } from './event';
import { allocationLine, historyLines, modulePath, nativeLines } from './format-shared';
import { FREE_BYPASS_HINT } from './format-host';

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

export function formatDeath(e: ViolationEvent, d: DeathInfo): string[] {
  const lines = [deathHeadline(e, d)];
  if (e.test) lines.push(`test: ${e.test}`);
  lines.push(...deathFacts(e, d));
  if (e.accessStack?.frames.length) lines.push(...nativeLines('stack', e.accessStack));
  if (e.allocation) lines.push(allocationLine(e.allocation, e), ...historyLines(e.allocation));
  lines.push(`hint: ${deathHint(e, d)}`);
  return lines;
}
