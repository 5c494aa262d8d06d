// CUDA device reports: a kernel's exception (an illegal address, CUDA's
// fault, reported with no address; a device-side assert; others) and a
// cross-stream free.
import * as path from 'node:path';

import { demangleName } from '../symbolize/demangle';
import type { DeviceLaunch, DeviceLaunchArg, EventAllocation, ViolationEvent } from './event';
import { trimJsStack } from './js-stack';
import { rankText } from './device-place';
import { allocationLine, bytes, historyLines } from './format-shared';

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

export function formatKernelException(e: ViolationEvent): string[] {
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

export function formatCrossStreamFree(e: ViolationEvent, a: EventAllocation): string[] {
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
