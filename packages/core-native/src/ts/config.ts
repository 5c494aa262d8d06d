// The allocator's own configuration (installGuardAllocator), declared once:
// each row yields the validation, the default and the docs (`mate options`).
import * as os from 'node:os';
import * as path from 'node:path';

import { GuardConfigError } from './errors';
import { parseNativeModules, parseSampleRate } from './native-heap';
import { GUARD_MODES, type GuardMode } from './settings';
import { parseBoolean, parseChoice, show } from './values';

export interface GuardAllocatorConfig {
  /** Guard page after the end (`tail`, default) or before the start (`head`). */
  mode?: GuardMode;
  /** Synchronize the device before canary checks at free (CUDA only). Default true. */
  syncOnFree?: boolean;
  /** Print one `[mate-guard]` line per allocation and free. Default false. */
  logAllocations?: boolean;
  /** Alignment of the user pointer: a power of two 1..4096. Default 16; 1 is byte-exact. */
  alignment?: number;
  /** Freed bytes kept inaccessible before slots are reused. Default 256 MiB. */
  quarantineMaxBytes?: number;
  /** Freed allocations kept inaccessible before slots are reused. Default 65536. */
  quarantineMaxCount?: number;
  /** Record the JS stack of every allocation for reports. Default true. */
  captureStacks?: boolean;
  /** Guard the native heap (malloc/new) of the modules matching these globs (absolute path or file name). */
  nativeModules?: readonly string[];
  /** Native heap: guard one allocation in N (random gaps of mean N). Default 1: every one. */
  nativeSampleRate?: number;
  /** Guard device memory. Not available in this version. */
  device?: 'cuda';
  /** Where JSON reports are written. Default: $MATE_GUARD_REPORT_DIR, else <tmp>/mate-guard-reports. */
  reportDir?: string;
}

export interface ResolvedGuardConfig {
  mode: GuardMode;
  syncOnFree: boolean;
  logAllocations: boolean;
  alignment: number;
  quarantineMaxBytes: number;
  quarantineMaxCount: number;
  captureStacks: boolean;
  reportDir: string;
  /** Absent when no module is chosen. */
  nativeModules?: string[];
  nativeSampleRate: number;
}

export function defaultReportDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MATE_GUARD_REPORT_DIR || path.join(os.tmpdir(), 'mate-guard-reports');
}

function count(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new GuardConfigError(`${name}: ${show(value)} is not allowed; use an integer from ${min} to ${max}`);
  }
  return value;
}

function notBuilt(what: string) {
  return (value: unknown, name: string): never => {
    throw new GuardConfigError(`${name}: ${show(value)} is not supported by this version of mate-guard (${what} is not built yet); leave it unset`);
  };
}

interface OptionRow<K extends keyof GuardAllocatorConfig> {
  name: K;
  default: string;  // as shown in docs
  allowed: string;
  description: string;
  /** Validates a given value; absent values take `fallback()`. */
  parse: (value: unknown, name: string) => unknown;
  fallback: () => unknown;
}

const row = <K extends keyof GuardAllocatorConfig>(r: OptionRow<K>) => r;

export const ALLOCATOR_OPTIONS = [
  row({
    name: 'mode', default: "'tail'", allowed: "'tail' or 'head'",
    description: 'tail: guard page right after the end (overruns fault), canary before the start. head: guard page right before the start (underruns fault), canary after the end.',
    parse: (v, n) => parseChoice(v, GUARD_MODES, n, 'guard mode'), fallback: () => 'tail',
  }),
  row({
    name: 'alignment', default: '16', allowed: 'a power of two 1..4096',
    description: 'Alignment of the pointer. In tail mode the gap between the end and the guard page (< alignment bytes) is canary too; 1 is byte-exact.',
    parse: (v, n) => {
      const a = count(v, n, 1, 4096);
      if ((a & (a - 1)) !== 0) throw new GuardConfigError(`${n}: ${a} is not allowed; use a power of two from 1 to 4096`);
      return a;
    },
    fallback: () => 16,
  }),
  row({
    name: 'logAllocations', default: 'false', allowed: 'boolean',
    description: 'One `[mate-guard] alloc #N ptr=0x... requested=N mapped=N mode=tail backend=host test="..."` line per allocation, and a `free` line per free.',
    parse: parseBoolean, fallback: () => false,
  }),
  row({
    name: 'captureStacks', default: 'true', allowed: 'boolean',
    description: 'Record the JS stack of every allocation for reports (the dearest part of a guarded allocation: see bench/README.md).',
    parse: parseBoolean, fallback: () => true,
  }),
  row({
    name: 'quarantineMaxBytes', default: '268435456 (256 MiB)', allowed: 'integer >= 0',
    description: 'Freed bytes kept inaccessible before their slots are reused (address space, not memory).',
    parse: (v, n) => count(v, n, 0, 2 ** 46), fallback: () => 256 * 2 ** 20,
  }),
  row({
    name: 'quarantineMaxCount', default: '65536', allowed: 'integer >= 0',
    description: 'Freed allocations kept inaccessible before their slots are reused.',
    parse: (v, n) => count(v, n, 0, 2 ** 31), fallback: () => 65536,
  }),
  row({
    name: 'reportDir', default: '$MATE_GUARD_REPORT_DIR or <tmp>/mate-guard-reports', allowed: 'a directory path',
    description: 'Where each violation is also written as JSON.',
    parse: (v, n) => {
      if (typeof v !== 'string' || v === '') throw new GuardConfigError(`${n}: ${show(v)} is not a directory path`);
      return path.resolve(v);
    },
    fallback: () => path.resolve(defaultReportDir()),
  }),
  row({
    name: 'syncOnFree', default: 'true', allowed: 'boolean',
    description: 'CUDA only: synchronize before the canary check at free.',
    parse: parseBoolean, fallback: () => true,
  }),
  row({
    name: 'nativeModules', default: '[]', allowed: 'globs (array, or a comma-separated string)',
    description: "Guard the native heap (malloc, calloc, realloc, free, aligned forms, strdup, C++ new/delete) of the loaded modules whose absolute path or file name matches, e.g. `'*my_addon.node'`. Other modules' allocations are untouched.",
    parse: (v, n) => {
      const list = parseNativeModules(v, n);
      return list.length ? list : undefined;
    },
    fallback: () => undefined,
  }),
  row({
    name: 'nativeSampleRate', default: '1', allowed: 'integer >= 1',
    description: 'Native heap: guard one allocation in N (random gaps of mean N, per thread); the rest go to libc. 1 guards every one.',
    parse: parseSampleRate, fallback: () => 1,
  }),
  row({
    name: 'device', default: 'unset', allowed: 'not built yet',
    description: "Guard CUDA device memory (`'cuda'`): designed, not built yet (refused with an error).",
    parse: notBuilt('CUDA guarding'), fallback: () => undefined,
  }),
] as const;

export function resolveAllocatorConfig(config: GuardAllocatorConfig = {}): ResolvedGuardConfig {
  if (config === null || typeof config !== 'object') {
    throw new GuardConfigError(`installGuardAllocator: ${show(config)} is not a config object`);
  }
  const names = ALLOCATOR_OPTIONS.map((r) => r.name as string);
  for (const key of Object.keys(config)) {
    if (!names.includes(key)) {
      throw new GuardConfigError(`installGuardAllocator: unknown option ${JSON.stringify(key)}; known: ${names.join(', ')}`);
    }
  }
  const given = config as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const r of ALLOCATOR_OPTIONS) {
    const value = given[r.name] === undefined ? r.fallback() : r.parse(given[r.name], r.name);
    if (value !== undefined) out[r.name] = value;
  }
  return out as unknown as ResolvedGuardConfig;
}

export function sameConfig(a: ResolvedGuardConfig, b: ResolvedGuardConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function allocatorOptionsMarkdown(): string {
  const lines = ['| option | default | allowed | meaning |', '|---|---|---|---|'];
  for (const r of ALLOCATOR_OPTIONS) lines.push(`| \`${r.name}\` | \`${r.default}\` | ${r.allowed} | ${r.description} |`);
  return lines.join('\n') + '\n';
}
