// The allocator's own configuration (installGuardAllocator), validated once.
import * as os from 'node:os';
import * as path from 'node:path';

import { GuardConfigError } from './errors';
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
  /** Guard the native heap of these modules (globs). Not available in this version. */
  nativeModules?: readonly string[];
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
}

const KNOWN = new Set([
  'mode', 'syncOnFree', 'logAllocations', 'alignment', 'quarantineMaxBytes', 'quarantineMaxCount',
  'captureStacks', 'nativeModules', 'device', 'reportDir',
]);

function count(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new GuardConfigError(`${name}: ${show(value)} is not allowed; use an integer from ${min} to ${max}`);
  }
  return value;
}

export function defaultReportDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MATE_GUARD_REPORT_DIR || path.join(os.tmpdir(), 'mate-guard-reports');
}

export function resolveAllocatorConfig(config: GuardAllocatorConfig = {}): ResolvedGuardConfig {
  if (config === null || typeof config !== 'object') {
    throw new GuardConfigError(`installGuardAllocator: ${show(config)} is not a config object`);
  }
  for (const key of Object.keys(config)) {
    if (!KNOWN.has(key)) {
      throw new GuardConfigError(`installGuardAllocator: unknown option ${JSON.stringify(key)}; known: ${[...KNOWN].join(', ')}`);
    }
  }
  const c = config as Record<string, unknown>;
  if (c.nativeModules !== undefined && !(Array.isArray(c.nativeModules) && c.nativeModules.length === 0)) {
    throw new GuardConfigError(
      `nativeModules: ${show(c.nativeModules)} is not supported by this version of mate-guard (guarding native heaps is not built yet); leave it unset`,
    );
  }
  if (c.device !== undefined) {
    throw new GuardConfigError(`device: ${show(c.device)} is not supported by this version of mate-guard (CUDA guarding is not built yet); leave it unset`);
  }
  const alignment = c.alignment === undefined ? 16 : count(c.alignment, 'alignment', 1, 4096);
  if ((alignment & (alignment - 1)) !== 0) {
    throw new GuardConfigError(`alignment: ${alignment} is not allowed; use a power of two from 1 to 4096`);
  }
  if (c.reportDir !== undefined && (typeof c.reportDir !== 'string' || c.reportDir === '')) {
    throw new GuardConfigError(`reportDir: ${show(c.reportDir)} is not a directory path`);
  }
  return {
    mode: c.mode === undefined ? 'tail' : parseChoice(c.mode, GUARD_MODES, 'mode', 'guard mode'),
    syncOnFree: c.syncOnFree === undefined ? true : parseBoolean(c.syncOnFree, 'syncOnFree'),
    logAllocations: c.logAllocations === undefined ? false : parseBoolean(c.logAllocations, 'logAllocations'),
    alignment,
    quarantineMaxBytes: c.quarantineMaxBytes === undefined ? 256 * 2 ** 20 : count(c.quarantineMaxBytes, 'quarantineMaxBytes', 0, 2 ** 46),
    quarantineMaxCount: c.quarantineMaxCount === undefined ? 65536 : count(c.quarantineMaxCount, 'quarantineMaxCount', 0, 2 ** 31),
    captureStacks: c.captureStacks === undefined ? true : parseBoolean(c.captureStacks, 'captureStacks'),
    reportDir: path.resolve((c.reportDir as string | undefined) ?? defaultReportDir()),
  };
}

export function sameConfig(a: ResolvedGuardConfig, b: ResolvedGuardConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
