// Loaded through NODE_OPTIONS=--require by `mate guard-run`: installs the
// allocator in every Node process the command starts, before user code.
import { installGuardAllocator } from './install';
import { parseBoolean } from './values';
import type { GuardAllocatorConfig } from './config';
import { GUARD_MODES } from './settings';
import { parseChoice } from './values';
import { NATIVE_HEAP_ENV, parseNativeModules, parseSampleRate } from './native-heap';

export const AUTO_INSTALL_ENV = {
  enable: 'MATE_GUARD_ALLOCATOR_AUTO_INSTALL',
  mode: 'MATE_GUARD_ALLOCATOR_MODE',
  logAllocations: 'MATE_GUARD_ALLOCATOR_LOG_ALLOCATIONS',
  alignment: 'MATE_GUARD_ALLOCATOR_ALIGNMENT',
  ...NATIVE_HEAP_ENV,
} as const;

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): GuardAllocatorConfig | undefined {
  const on = env[AUTO_INSTALL_ENV.enable];
  if (on === undefined || !parseBoolean(on, AUTO_INSTALL_ENV.enable)) return undefined;
  const config: GuardAllocatorConfig = {};
  const mode = env[AUTO_INSTALL_ENV.mode];
  if (mode) config.mode = parseChoice(mode, GUARD_MODES, AUTO_INSTALL_ENV.mode, 'guard mode');
  const log = env[AUTO_INSTALL_ENV.logAllocations];
  if (log) config.logAllocations = parseBoolean(log, AUTO_INSTALL_ENV.logAllocations);
  const alignment = env[AUTO_INSTALL_ENV.alignment];
  if (alignment) config.alignment = Number(alignment);
  const native = env[AUTO_INSTALL_ENV.modules];
  if (native) config.nativeModules = parseNativeModules(native.startsWith('[') ? (JSON.parse(native) as unknown) : native, AUTO_INSTALL_ENV.modules);
  const rate = env[AUTO_INSTALL_ENV.sampleRate];
  if (rate) config.nativeSampleRate = parseSampleRate(rate, AUTO_INSTALL_ENV.sampleRate);
  return config;
}

const config = configFromEnv();
if (config) installGuardAllocator(config);
