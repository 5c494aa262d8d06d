// The CUDA device guard's glue (device: 'cuda'): turning it on in a Node
// process, its counters, and what `mate guard-run --device cuda` sets up for
// child processes that are not Node (Python: PyTorch's allocator through
// python/sitecustomize.py, copied from packages/python at build time, and libmate_guard_cuda.so). The guard itself is
// native (src/native/device); addons reach it with no code change (their
// CUDA allocation calls are redirected) or through include/mate_guard.h.
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import type { ResolvedGuardConfig } from './config';
import { afterAddonLoads } from './addon-loads';
import { binaryCandidates } from './binary-fit';
import type { NativeBinding, NativeStats } from './native';

/**
 * Process-level paths guard-run gives non-Node children (not settings:
 * those travel in the handoff): the plain library.
 */
export const DEVICE_PROCESS_ENV = {
  library: 'MATE_GUARD_CUDA_LIBRARY',
} as const;

const packageRoot = path.resolve(__dirname, '..', '..');

/** libmate_guard_cuda.so: prebuilt first where it fits this machine, else built from source. */
export function cudaLibraryPath(): string | undefined {
  return binaryCandidates(packageRoot, 'libmate_guard_cuda.so').find((c) => c.problem === null)?.file;
}

/**
 * Turns the device guard on in this process (first: nothing is installed
 * if CUDA is unusable). `options`: the settings object configure() gets;
 * the binding takes each setting with a device meaning from it.
 */
export function installDeviceGuard(
  native: NativeBinding,
  config: ResolvedGuardConfig,
  options: Record<string, unknown>,
): void {
  try {
    native.configureDevice({ ...options, redirectGlobs: [...config.nativeModules] });
  } catch (err) {
    throw new GuardConfigError((err as Error).message);
  }
  // Addons loaded later are redirected when they load; this catches any
  // loaded some other way.
  afterAddonLoads(() => native.deviceRefresh());
}

/** Stops the guard's background work and finishes pending checks (at exit). */
export function shutdownDeviceGuard(native: NativeBinding): void {
  native.shutdownDevice();
}

const addReason = (reasons: Record<string, number>, reason: string, n: number) => ({
  ...reasons,
  [reason]: (reasons[reason] ?? 0) + n,
});

/** Host counters with the device's added, for the run summary. */
export function withDeviceStats(native: NativeBinding, host: NativeStats): NativeStats {
  const d = native.deviceStats();
  if (!d) return host;
  return {
    ...host,
    allocations: host.allocations + d.allocations,
    frees: host.frees + d.frees,
    live: host.live + d.live,
    peakLive: host.peakLive + d.peakLive,
    fallbacks: host.fallbacks + d.fallbacks,
    fallbackReason: d.fallbacks ? d.fallbackReason : host.fallbackReason,
    ...(d.fallbacks
      ? { fallbackReasons: addReason(host.fallbackReasons ?? {}, d.fallbackReason ?? 'unknown reason', d.fallbacks) }
      : {}),
    device: d,
  };
}

/** What `mate guard-run --device cuda` adds to its command's environment for Python processes. */
export function deviceChildEnv(env: NodeJS.ProcessEnv): void {
  const lib = cudaLibraryPath();
  if (lib) env[DEVICE_PROCESS_ENV.library] = lib;
  const python = path.join(packageRoot, 'python');
  env.PYTHONPATH = env.PYTHONPATH ? `${python}${path.delimiter}${env.PYTHONPATH}` : python;
}
