// The install contract: installGuardAllocator and the calls that go with it.
import * as fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

import type * as Render from '../report/render';
import { parseEvent, type ViolationEvent } from '../report/event';
import { EVENT_FILE, UNFINISHED_EVENT_FILE, writeEventFile } from '../report/files';
import { defaultDropDirs, machineryPackages } from '../report/machinery';
import type * as Suppressions from '../report/suppressions';
import type { ReportKind } from '../report/kinds';
import { formatTrackingOffWarning, formatUnguardedWarning } from '../run/summary';
import { processStats, writeProcessStats, type ProcessGuardStats } from '../run/process-stats';
import { runOwnership, runsAlone } from '../run/owner';
import { runExitCode } from '../run/verdict';
import { SETTINGS, type GuardSettings, type SettingRow } from '../settings/table';
import {
  allocatorConfigOf,
  resolveAllocatorConfig,
  sameConfig,
  type GuardAllocatorConfig,
  type ResolvedGuardConfig,
} from './config';
import { afterAddonLoads } from './addon-loads';
import { installDeviceGuard, shutdownDeviceGuard, withDeviceStats } from './device';
import { loadNative, type NativeAllocation, type NativeBinding } from './native';
import { flushNativeHeapState, formatSilentModules, formatUnmatchedGlobs, startNativeHeap } from './native-heap';
import { patchRealm, type GuardedAlloc } from './realm';
import { makeJsStacks, makeNativeStackCapture, makeStackedAlloc, type JsStacks } from './stack';
import { isOwnReportDir } from '../run/private-files';

/** A memory-safety violation found by a canary check. */
export interface GuardViolation {
  kind: ReportKind;
  /** The report, every line starting with `==mate-guard==`. */
  text: string;
  /** The same event as written to the report directory. */
  event: ViolationEvent;
}

export type GuardStats = ProcessGuardStats;
export type GuardAllocation = NativeAllocation;

interface Active {
  config: ResolvedGuardConfig;
  native: NativeBinding;
  alloc: GuardedAlloc;
}

let active: Active | undefined;
// A run's suppressions (installFromSettings): violations they match are marked, not failed.
let suppressions: Suppressions.SuppressionRules | undefined;

// The formatter, symbolizer and suppression matcher load with the first
// violation (or a run's suppressions), not at install: a clean process
// allocates no more at startup than it must, so its own garbage is not
// collected much sooner than without mate-guard (a forked child of
// better-sqlite3's suite checks files its unreachable databases keep).
const reports = (): typeof Render => require('../report/render') as typeof Render;
const suppressionRules = (): typeof Suppressions => require('../report/suppressions') as typeof Suppressions;

// Node's own Buffer.from, as found before any install patched it: a view
// over the guarded memory is all guardedBuffer needs (the patched one also
// checks whether its argument must be copied).
const bufferView = Buffer.from.bind(Buffer) as (ab: ArrayBuffer, offset: number, length: number) => Buffer;

function makeAlloc(native: NativeBinding, stacks: JsStacks | undefined): GuardedAlloc {
  if (!stacks) return (size, _entry, oneByte) => native.alloc(size, undefined, undefined, oneByte === true);
  return makeStackedAlloc(native, stacks);
}

/** The allocator settings that have a native side (options.inc), by key. */
function nativeOptionsOf(config: ResolvedGuardConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of SETTINGS as readonly SettingRow[])
    if (r.native) out[r.key] = (config as Record<string, unknown>)[r.key];
  return out;
}

/** A config already parsed and complete (from installGuardAllocator or a run's handoff). */
function installResolved(config: ResolvedGuardConfig): void {
  if (active) {
    if (sameConfig(active.config, config)) return;
    throw new Error('Guard allocator is already active with a different configuration');
  }
  const native = loadNative();
  fs.mkdirSync(config.reportDir, { recursive: true });
  const stacks = config.captureStacks ? makeJsStacks(native) : undefined;
  // Addons' allocations and launches made inside calls from JS get the JS stack too.
  if (stacks && (config.device === 'cuda' || config.nativeModules.length))
    native.registerJsStackCapture(makeNativeStackCapture(native, stacks));
  // First: when the device can't be guarded, nothing is installed.
  if (config.device === 'cuda') installDeviceGuard(native, config, nativeOptionsOf(config));
  native.configure(nativeOptionsOf(config), config.reportDir, {
    path: process.env.PATH ?? '',
    withEarlier: !ownedElsewhere(),
    machineryDirs: defaultDropDirs(),
    machineryPackages: machineryPackages(),
  });
  // Every addon loaded from now on is in the module map the fault handler reads.
  afterAddonLoads(() => native.refreshModuleMap());
  if (config.nativeModules.length) startNativeHeap(native, config.nativeModules, config.reportDir);
  const alloc = makeAlloc(native, stacks);
  patchRealm(globalThis, alloc);
  active = { config, native, alloc };
  process.once('exit', onExit);
}

/**
 * Installs the guard allocator in this process: JS buffers made from now on
 * are guarded. Installing again with the same config does nothing; with a
 * different one it throws.
 */
export function installGuardAllocator(config: GuardAllocatorConfig = {}): void {
  installResolved(resolveAllocatorConfig(config));
}

/** Installs from a run's resolved settings (runner workers, guard-run's children). */
export function installFromSettings(settings: GuardSettings): void {
  installResolved(allocatorConfigOf(settings));
  suppressions = settings.suppressions ? suppressionRules().loadSuppressions(settings.suppressions) : undefined;
}

/** A run's owner other than this process will read the report directory after it (and print what it must). */
function ownedElsewhere(): boolean {
  try {
    return runOwnership(false).elsewhere;
  } catch {
    return false;
  }
}

// Nothing is lost at exit: damage nobody checked yet is reported, fails the
// process, and the counters are left for the run's summary.
function onExit(): void {
  if (!active) return;
  // Pending device checks end (and a CUDA fault nobody looked at is reported) first.
  if (active.config.device) shutdownDeviceGuard(active.native);
  const left = collect(true, 'stderr').filter((v) => !v.event.suppressed);
  for (const v of left) process.stderr.write(v.text);
  // Damage reported here reached no test: by the run's rule, it fails the process.
  const code = runExitCode(
    Number(process.exitCode ?? 0),
    left.map((v) => v.event),
  );
  if (code !== 0) process.exitCode = code;
  const s = stats();
  writeProcessStats(active.config.reportDir, s);
  // Diagnostics for tuning the device guard (bench/), as the Python library prints them.
  if (s.device && process.env.MATE_GUARD_CUDA_STATS)
    process.stderr.write(`[mate-guard] cuda stats: ${JSON.stringify(s.device)}\n`);
  const native = active.config.nativeModules.length > 0;
  if (native) flushNativeHeapState(active.native, active.config.reportDir);
  removeOwnDirIfClean(active.config.reportDir);
  // Alone (no run owner to summarize), say it here, once.
  let alone = true;
  try {
    alone = runsAlone();
  } catch {
    // a broken handoff: say it here
  }
  if (alone) {
    const by: Record<string, number> = {};
    for (const [reason, n] of Object.entries(
      s.fallbackReasons ?? (s.fallbackReason ? { [s.fallbackReason]: s.fallbacks } : {}),
    ))
      by[`because ${reason}`] = n;
    process.stderr.write(formatUnguardedWarning(s.fallbacks, by));
    process.stderr.write(
      formatTrackingOffWarning(s.device?.launchTracking === false ? [s.device.trackingOff ?? ''] : []),
    );
    if (native) {
      const heap = active.native.nativeHeap();
      process.stderr.write(formatUnmatchedGlobs(heap.unmatched));
      process.stderr.write(
        formatSilentModules(
          heap.modules
            .filter((m) => !m.error && !m.allocationCalls)
            .map((m) => ({ path: m.path, symbols: m.symbols, memoryImports: m.memoryImports })),
        ),
      );
    }
  }
}

/**
 * This process's own report folder (no run, no directory given) goes at
 * exit when it holds no report: nobody reads its counters, and a clean
 * run leaves nothing behind. One with a report stays (`mate report <dir>`).
 */
function removeOwnDirIfClean(dir: string): void {
  // A worker_threads Worker's exit is not the process's: the folder stays for the threads still running.
  if (!isOwnReportDir(dir) || !isMainThread) return;
  try {
    if (fs.readdirSync(dir).some((n) => EVENT_FILE.test(n) || UNFINISHED_EVENT_FILE.test(n) || n === 'inputs')) return;
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // gone already, or unreadable: nothing to tidy
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
  return bufferView(need().alloc(size, guardedBuffer, true), 0, size);
}

/**
 * Checks canaries and returns the violations not reported before: those of
 * allocations made since the last check, and near the data of older live
 * ones while at most 4,096 are live (`all`: every byte of every live one),
 * plus damage found when buffers were freed. Each is rendered and
 * written to the report directory; one a run's suppressions match carries
 * `event.suppressed` (the test bracket leaves it out).
 */
export function checkCanaries(options: { all?: boolean } = {}): GuardViolation[] {
  return collect(options.all ?? false, 'caller');
}

function collect(all: boolean, delivered: ViolationEvent['delivered']): GuardViolation[] {
  const { native, config } = need();
  return native.checkCanaries(all).map((json) => {
    const event = parseEvent(json);
    event.delivered = delivered;
    event.text = reports().renderEvent(event, (e) => suppressionRules().matchSuppression(e, suppressions));
    event.file = writeEventFile(config.reportDir, event);
    return { kind: event.kind, text: event.text, event };
  });
}

/** Names the running test in reports (null when none runs). */
export function setCurrentTest(name: string | null): void {
  const { native } = need();
  // Cheap when nothing was loaded: catches libraries an addon loaded itself.
  if (name !== null) native.refreshModuleMap();
  native.setCurrentTest(name);
}

export function stats(): GuardStats {
  const { native, config } = need();
  const host = native.stats();
  return processStats(config.device ? withDeviceStats(native, host) : host);
}

/** The live guarded allocations. */
export function snapshot(): GuardAllocation[] {
  return need().native.snapshot();
}

/**
 * Patches another realm (a vm context's global, as in Jest) with the
 * active allocator; returns the undo function.
 */
export function guardRealm(realm: typeof globalThis): () => void {
  return patchRealm(realm, need().alloc);
}
