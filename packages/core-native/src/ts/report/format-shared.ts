// The parts every report shares: byte counts, stacks (JS, Python and
// native frames cut to the user's own), an allocation's history.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { formatNativeFrames } from '../symbolize/frame-lines';
import type { SymbolizedFrame } from '../symbolize/types';
import type { EventAllocation, NativeStack, ViolationEvent } from './event';
import { formatDroppedFrames, trimJsStack } from './js-stack';

export const bytes = (n: number | bigint) => `${n} ${n === 1 || n === 1n ? 'byte' : 'bytes'}`;

export const RELATION_TEXT = { 'past-end': 'past the end of', 'before-start': 'before the start of', inside: 'inside' } as const;

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
export function nativeLines(title: string, stack: NativeStack): string[] {
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
export function historyLines(a: EventAllocation, firstFree = false): string[] {
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

export const allocationLine = (a: EventAllocation, e?: ViolationEvent) =>
  `allocation #${a.id}: ${bytes(a.size)} at [${a.start}, ${a.end}), ${a.mode} mode, alignment ${a.alignment}, backend ${a.backend}${e?.device ? ` on device ${e.device.ordinal}` : ''} (${a.guardMethod})`;

/** A module path as reports name it: relative to the working directory when inside it. */
export function modulePath(module: string): string {
  const rel = path.relative(process.cwd(), module);
  return rel && !rel.startsWith('..') ? rel : module;
}
