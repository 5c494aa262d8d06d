// The install contract: installGuardAllocator and the calls that go with it.
import * as fs from 'node:fs';

import { resolveAllocatorConfig, sameConfig, type GuardAllocatorConfig, type ResolvedGuardConfig } from './config';
import { loadNative, type NativeAllocation, type NativeBinding } from './native';
import { patchRealm, type GuardedAlloc } from './realm';
import { formatUnguardedWarning, RUN_SUMMARY_ENV } from './run-report';
import { processStats, writeProcessStats, type ProcessGuardStats } from './run-stats';
import { makeStackedAlloc } from './stack';

/** A memory-safety violation found by a canary check. */
export interface GuardViolation {
  kind: string;
  /** The report, every line starting with `==mate-guard==`. */
  text: string;
  /** The same event as parsed JSON (also written to the report directory). */
  event: Record<string, unknown>;
}

export type GuardStats = ProcessGuardStats;
export type GuardAllocation = NativeAllocation;

interface Active {
  config: ResolvedGuardConfig;
  native: NativeBinding;
  alloc: GuardedAlloc;
  restore: () => void;
}

let active: Active | undefined;

function makeAlloc(native: NativeBinding, config: ResolvedGuardConfig): GuardedAlloc {
  if (!config.captureStacks) return (size) => native.alloc(size);
  return makeStackedAlloc(native);
}

/**
 * Installs the guard allocator in this process: JS buffers made from now on
 * are guarded. Installing again with the same config does nothing; with a
 * different one it throws.
 */
export function installGuardAllocator(config: GuardAllocatorConfig = {}): void {
  const resolved = resolveAllocatorConfig(config);
  if (active) {
    if (sameConfig(active.config, resolved)) return;
    throw new Error('Guard allocator is already active with a different configuration');
  }
  const native = loadNative();
  fs.mkdirSync(resolved.reportDir, { recursive: true });
  native.configure(
    {
      tailMode: resolved.mode === 'tail',
      alignment: resolved.alignment,
      quarantineMaxBytes: resolved.quarantineMaxBytes,
      quarantineMaxCount: resolved.quarantineMaxCount,
      logAllocations: resolved.logAllocations,
      forceMprotect: process.env.MATE_GUARD_FORCE_MPROTECT === '1',
      ...(process.env.MATE_GUARD_MAX_LIVE_MPROTECT ? { maxLiveMprotect: Number(process.env.MATE_GUARD_MAX_LIVE_MPROTECT) } : {}),
    },
    resolved.reportDir,
  );
  const alloc = makeAlloc(native, resolved);
  active = { config: resolved, native, alloc, restore: patchRealm(globalThis, alloc) };
  process.once('exit', onExit);
}

// Nothing is lost at exit: damage nobody checked yet is reported, fails the
// process, and the counters are left for the runner's summary.
function onExit(): void {
  if (!active) return;
  const left = checkCanaries({ all: true });
  for (const v of left) process.stderr.write(v.text);
  if (left.length && !process.exitCode) process.exitCode = 1;
  const s = stats();
  writeProcessStats(active.config.reportDir, s);
  // Alone (no runner or guard-run to summarize), say it here, once.
  if (!process.env[RUN_SUMMARY_ENV]) {
    process.stderr.write(formatUnguardedWarning(s.fallbacks, [s.fallbackReason ?? 'unknown reason']));
  }
}

/**
 * Writes this process's counters for the run summary now (a runner may end
 * its workers without 'exit' handlers running). Later calls overwrite.
 */
export function flushGuardStats(): void {
  if (active) writeProcessStats(active.config.reportDir, stats());
}

export function isGuardAllocatorActive(): boolean {
  return active !== undefined;
}

/** The resolved config of the active allocator, or undefined. */
export function guardAllocatorConfig(): Readonly<ResolvedGuardConfig> | undefined {
  return active?.config;
}

function need(): Active {
  if (!active) throw new Error('mate-guard: the guard allocator is not installed (call installGuardAllocator first)');
  return active;
}

/** A zero-filled Buffer of `size` bytes in guarded memory. */
export function guardedBuffer(size: number): Buffer {
  if (!Number.isInteger(size) || size < 0) {
    throw new RangeError(`guardedBuffer: size ${String(size)} is not allowed; use a non-negative integer`);
  }
  return Buffer.from(need().alloc(size, guardedBuffer), 0, size);
}

/**
 * Checks canaries and returns the violations not reported before: those of
 * allocations made since the last check (or of every live allocation with
 * `all`), plus damage found when buffers were freed.
 */
export function checkCanaries(options: { all?: boolean } = {}): GuardViolation[] {
  const { native } = need();
  return native.checkCanaries(options.all ?? false).map((v) => ({
    kind: v.kind,
    text: v.text,
    event: JSON.parse(v.json) as Record<string, unknown>,
  }));
}

/** Names the running test in reports (null when none runs). */
export function setCurrentTest(name: string | null): void {
  need().native.setCurrentTest(name);
}

export function stats(): GuardStats {
  return processStats(need().native.stats());
}

/** The live guarded allocations. */
export function snapshot(): GuardAllocation[] {
  return need().native.snapshot();
}

/**
 * Patches another realm (a vm context's global, as Jest's) with the active
 * allocator; returns the undo function.
 */
export function guardRealm(realm: typeof globalThis): () => void {
  return patchRealm(realm, need().alloc);
}
