// Every setting of mate-guard, declared once. A row yields its TS type
// (GuardSettings below), its parser, the spellings every runner shares
// (runner flag, runner environment variable, config key; a runner's own
// config spelling is its adapter's), `mate guard-run` flag, installGuardAllocator key, process-wide
// environment default), the native options struct (options.inc is
// generated from the rows with `native`) and the docs (`mate options`,
// README tables, --help).
import type * as Suppressions from '../report/suppressions';
import {
  booleanValue,
  choiceValue,
  fileValue,
  integerValue,
  listValue,
  pathValue,
  textValue,
  type ValueKind,
} from './values';

export type GuardMode = 'tail' | 'head';
export const GUARD_MODES: readonly GuardMode[] = ['tail', 'head'];

/**
 * A runner package's name for its settings, lower case with dashes
 * ('vitest', 'node-test'): its variables are MATE_<NAME>_GUARD_*. Chosen
 * by the runner's package; core keeps no list of runners.
 */
export type RunnerName = string;

export type CudaQuarantine = 'adaptive' | 'strict';
export const CUDA_QUARANTINES: readonly CudaQuarantine[] = ['adaptive', 'strict'];

/** How a freed native kept slot is closed (tuning; see the keptClose row). */
export type KeptClose = 'auto' | 'mprotect' | 'markers';
export const KEPT_CLOSES: readonly KeptClose[] = ['auto', 'mprotect', 'markers'];

/** Where a setting can be given. */
interface Surfaces {
  /** `--guard-<name>`, `MATE_<RUNNER>_GUARD_<NAME>`, and the runner's config (as its adapter spells it: Vitest `<key>`, Jest `guard<Name>`, Mocha `guard-<name>`). */
  runner?: true;
  /** `mate guard-run --<name>`. */
  guardRun?: true;
  /** `installGuardAllocator({ <key> })`. */
  api?: true;
  /** `mate replay --<name>` (or `--guard-<name>`): what a replay may change of the recorded settings. */
  replay?: true;
  /**
   * The Python package (host and device guard): pytest `--guard-<name>`,
   * `MATE_PYTEST_GUARD_<NAME>`, ini `guard_<name>`, and (but `alloc`)
   * `GuardAllocatorConfig(<snake_key>=...)`. Read from settings.json.
   */
  python?: true;
  /** pytest only: `--guard-<name>`, `MATE_PYTEST_GUARD_<NAME>`, ini `guard_<name>` (no config field). */
  pytest?: true;
  /** The Python API only: `GuardAllocatorConfig(<snake_key>=...)` and `python -m mate_guard --<name>` (not pytest). */
  pythonApi?: true;
}

/**
 * The C++ side of a setting: a field of mate::Options (options.inc), read
 * by the Node binding (host and device) and by the handoff reader of
 * processes without Node (the CUDA library). Choice rows map to a C++ enum
 * of the same name (`'tail'` -> `Mode::kTail`); `Tristate` is an optional
 * boolean (unset: the process's own default).
 */
interface NativeField {
  field: string;
  ctype: 'bool' | 'uint32_t' | 'uint64_t' | 'Mode' | 'Tristate' | 'CudaQuarantine' | 'std::string';
}

export interface SettingRow<K extends string = string, T = unknown> {
  /** Internal name, end to end: GuardSettings key, installGuardAllocator key, Vitest option. */
  key: K;
  /** Kebab name: `--guard-<name>` for runners, `--<name>` for guard-run. */
  name: string;
  value: ValueKind<T>;
  default: T;
  /** The default as the docs show it, when it is not the value itself. */
  defaultText?: string;
  description: string;
  surfaces: Surfaces;
  /** A process-wide environment variable that sets the default (below explicit config). */
  processEnv?: string;
  /**
   * Decided once for a whole run by the process that starts it (before any
   * worker): a per-file option (Jest's testEnvironmentOptions) cannot change it.
   */
  runWide?: true;
  /**
   * Acts only on CUDA device memory: with the device guard off, the setting
   * would do nothing, so setting it off its default is refused
   * (settings/device-only.ts), and said to do nothing where Python has no
   * CUDA driver (_settings.py, from settings.json).
   */
  needsDevice?: true;
  native?: NativeField;
}

// Keeps each row's key, value type and surfaces as literal types, for GuardSettings below.
const row = <K extends string, T, S extends Surfaces>(r: SettingRow<K, T> & { surfaces: S }) => r;

const REPORT_DIR_ENV = 'MATE_GUARD_REPORT_DIR';

export const SETTINGS = [
  row({
    key: 'enabled',
    name: 'alloc',
    value: booleanValue,
    default: false,
    description: 'Back JS buffers with guard-page allocations and check canaries after every test.',
    surfaces: { runner: true, python: true },
  }),
  row({
    key: 'mode',
    name: 'mode',
    value: choiceValue(GUARD_MODES, 'guard mode'),
    default: 'tail' as GuardMode,
    description:
      'tail: guard page right after the end (overruns fault), canary before the start. head: guard page right before the start (underruns fault), canary after the end.',
    surfaces: { runner: true, guardRun: true, api: true, python: true, replay: true },
    native: { field: 'mode', ctype: 'Mode' },
  }),
  row({
    key: 'logAllocations',
    name: 'log-allocations',
    value: booleanValue,
    default: false,
    description:
      'One `[mate-guard] alloc #N ptr=0x... requested=N mapped=N mode=tail backend=host test="..."` line per allocation, and a `free` line per free.',
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    native: { field: 'log_allocations', ctype: 'bool' },
  }),
  row({
    key: 'alignment',
    name: 'alignment',
    value: integerValue(1, 4096, true),
    default: 16,
    description:
      'Alignment of the pointer. In tail mode the gap between the end and the guard page (< alignment bytes) is canary too; 1 is byte-exact.',
    surfaces: { runner: true, guardRun: true, api: true, python: true, replay: true },
    native: { field: 'alignment', ctype: 'uint32_t' },
  }),
  row({
    key: 'exactPlacement',
    name: 'exact-placement',
    value: booleanValue,
    default: true,
    description:
      "Tail mode: place JS buffers with 1-byte elements (Buffer, Uint8Array, Int8Array, Uint8ClampedArray) byte-exact, their last byte against the guard whatever `alignment` says, so code reading past the end (a truncated UTF-8 lead byte at a buffer's end) faults at once: a read damages no canary, so the alignment gap alone never shows it. Other JS buffers (ArrayBuffer, wider typed arrays) keep `alignment`. On by default: eight third-party addon suites ran with it as without it (no report, CPU 0.94-1.04x, bench/README.md), and Node's own Buffer pool hands out only 8-byte-aligned slices; a native library that assumes 8- or 16-byte alignment of Buffer data may fail with it: turn it off (`--no-guard-exact-placement`). Device allocations: deviceExactPlacement.",
    surfaces: { runner: true, guardRun: true, api: true },
    native: { field: 'exact_placement', ctype: 'bool' },
  }),
  row({
    key: 'deviceExactPlacement',
    name: 'device-exact-placement',
    value: booleanValue,
    default: false,
    description:
      "Tail mode: place CUDA device allocations (Node and Python) byte-exact, their last byte against the guard whatever `alignment` says, so a kernel reading one element past a tensor faults at once. Off by default: it breaks the CUDA API's 256-byte alignment promise, so a kernel with vector loads (float4, ld.global.v4) on a tensor whose size is not a multiple of 16 faults with a misaligned address, a false failure (PyTorch checks alignment before vectorizing: its loop ran clean with it, bench/README.md).",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    needsDevice: true,
    native: { field: 'device_exact_placement', ctype: 'bool' },
  }),
  row({
    key: 'rerun',
    name: 'rerun',
    value: booleanValue,
    default: true,
    description:
      "When a run of a runner's mate-* command (mate-vitest, mate-jest, ...) or of mate guard-run ends with canary damage, rerun the affected test files once in the configuration that makes the bad access fault (the other mode; alignment 1 for the alignment gap of a JS buffer; for the gap of a native allocation only its size placed byte-exact, nativeExactSize), and show that fault with its access site under the report. Plain runners never rerun.",
    // pytest's rerun is its own (the plugin's help says what it does there).
    surfaces: { runner: true, guardRun: true, pytest: true },
  }),
  row({
    key: 'exitCode',
    name: 'exit-code',
    value: integerValue(0, 255),
    default: 1,
    description:
      "Python API and `python -m mate_guard`: the exit status of a process that had violations (as sanitizers' exitcode), so CI fails; 0 leaves the status alone. pytest sets its own (1: the tests with violations failed).",
    surfaces: { pythonApi: true },
  }),
  row({
    key: 'captureStacks',
    name: 'capture-stacks',
    value: booleanValue,
    default: true,
    description:
      "Record the JS stack of every allocation for reports (each distinct stack is captured once, then recognised from its raw frames: see bench/README.md); of a chosen module's native allocation, the JS call into the module; with the device guard also of every kernel launch, and in Python processes the Python stacks.",
    surfaces: { guardRun: true, api: true, python: true },
    native: { field: 'capture_stacks', ctype: 'bool' },
  }),
  row({
    key: 'quarantineMaxBytes',
    name: 'quarantine-max-bytes',
    value: integerValue(0, 2 ** 46) as ValueKind<number | undefined>,
    default: undefined as number | undefined,
    defaultText: 'unset: 268435456 (256 MiB) of host slots, 274877906944 (256 GiB) of CUDA ranges',
    description:
      "Freed bytes kept inaccessible before their slots are reused (address space, not memory), per backend: host slots, and CUDA device ranges (unmapped: they hold no GPU memory). Also lowers the native heap's foreign quarantine (memory a chosen module frees that it did not allocate, held filled; at most 4 MiB); 0 turns that off.",
    surfaces: { api: true, python: true },
    native: { field: 'quarantine_max_bytes', ctype: 'uint64_t' },
  }),
  row({
    key: 'quarantineMaxCount',
    name: 'quarantine-max-count',
    value: integerValue(0, 2 ** 31),
    default: 65536,
    description:
      "Freed allocations kept inaccessible before their slots are reused (host and CUDA, each). Also lowers the native heap's foreign quarantine (at most 1,024 blocks); 0 turns that off.",
    surfaces: { api: true, python: true },
    native: { field: 'quarantine_max_count', ctype: 'uint32_t' },
  }),
  row({
    key: 'reportDir',
    name: 'report-dir',
    value: pathValue('directory'),
    default: undefined as string | undefined,
    defaultText: `$${REPORT_DIR_ENV}, else a fresh temporary directory per run`,
    description:
      "Where violations are written as JSON, with each process's counters. A run given one makes a directory of its own inside it and keeps it, clean or not, for `mate report` (CI: shards, merged summary); without one a run uses a fresh folder of its own under <tmp>/mate-guard-<uid>/, kept only when it holds a violation. installGuardAllocator writes straight into it (default: a fresh folder of its own under <tmp>/mate-guard-<uid>/, private to you, removed at exit when it holds no report).",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    processEnv: REPORT_DIR_ENV,
    runWide: true,
  }),
  row({
    key: 'suppressions',
    name: 'suppressions',
    // The matcher loads only when a run names a file (install/install.ts: startup stays small).
    value: fileValue(
      'suppressions file',
      (file) => void (require('../report/suppressions') as typeof Suppressions).loadSuppressions(file),
    ),
    default: undefined as string | undefined,
    defaultText: 'unset',
    description:
      'A file of known violations to count, not fail: one `<kind> <field>=<glob> ...` line each (README "Suppressions"). A missing or malformed file stops the run, naming the line.',
    surfaces: { runner: true, guardRun: true },
    runWide: true,
  }),
  row({
    key: 'syncOnFree',
    name: 'sync-on-free',
    value: booleanValue as ValueKind<boolean | undefined>,
    default: undefined as boolean | undefined,
    defaultText: 'unset: on in Node; in pytest on in a serial run, off in xdist workers; off in other Python',
    description:
      'CUDA: a free waits for the work queued before it on its stream, then checks the canary at once (a violation fails the test that freed). Off: the background thread checks once that work is done (the same finding, a moment later, never stalling the program). Unset: on in Node processes and in a serial pytest run; off in other Python processes (no test to fail there) and in pytest-xdist workers (the end of each test checks their frees, with no free waiting for a GPU the workers share).',
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    needsDevice: true,
    native: { field: 'sync_on_free', ctype: 'Tristate' },
  }),
  row({
    key: 'nativeModules',
    name: 'native',
    value: listValue('glob'),
    default: [] as string[],
    description:
      "Guard the native heap (malloc, calloc, realloc, free, aligned forms, strdup, C++ new/delete) of the loaded modules whose absolute path or file name matches, e.g. `'*my_addon.node'`; a library the addon pulls in matches too. Other modules' allocations are untouched. A glob that matches no loaded module gets one warning.",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
  }),
  row({
    key: 'nativeSampleRate',
    name: 'native-sample-rate',
    value: integerValue(1, 2 ** 31),
    default: 1,
    description:
      'Native heap: guard one allocation in N (random gaps of mean N, per thread); the rest go to libc. 1 guards every one.',
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    native: { field: 'native_sample_rate', ctype: 'uint32_t' },
  }),
  row({
    key: 'nativeSiteFirst',
    name: 'native-site-first',
    value: integerValue(0, 2 ** 16),
    default: 8,
    description:
      "Native heap, with nativeSampleRate above 1: guard the first N allocations of every call site (the return address of the module's malloc/calloc/realloc/new call), then sample. A bug that happens on every call of a site is caught whatever the rate; the summary says how many sites were seen and that each was covered. 0: plain sampling.",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    native: { field: 'native_site_first', ctype: 'uint32_t' },
  }),
  row({
    key: 'nativeExactSize',
    name: 'native-exact-size',
    value: integerValue(0, 2 ** 31),
    default: 0,
    defaultText: '0 (none)',
    description:
      "Native heap: place the chosen modules' allocations of exactly this many bytes byte-exact (tail mode: the end on the guard page), so a write into the gap malloc's 16-byte alignment leaves (1 to 15 bytes of canary) faults at once. Every other native allocation keeps malloc's 16-byte alignment whatever `alignment` says (code relies on it). The automatic rerun sets it after canary damage in such a gap; code that needs blocks of that size 16-byte aligned (SSE loads) may crash with it.",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    native: { field: 'native_exact_size', ctype: 'uint64_t' },
  }),
  row({
    key: 'device',
    name: 'device',
    value: choiceValue(['cuda'] as const, 'device') as ValueKind<'cuda' | undefined>,
    default: undefined as 'cuda' | undefined,
    defaultText: 'unset',
    description:
      "Guard CUDA device memory (`'cuda'`; turns guarding on): the device allocations of every addon (its own cudaMalloc/cudaFree/cudaMallocAsync/cudaFreeAsync/cuMemAlloc/cuMemFree, redirected with no code change, or the C ABI `mate_guard.h`) and, under `mate guard-run`, PyTorch's tensors get an unmapped guard granule and canary slack; each live one holds at least one 2 MiB granule of GPU memory. Graph capture is refused.",
    surfaces: { runner: true, guardRun: true, api: true },
  }),
  row({
    key: 'cudaQuarantine',
    name: 'cuda-quarantine',
    value: choiceValue(CUDA_QUARANTINES, 'CUDA quarantine policy'),
    default: 'adaptive' as CudaQuarantine,
    description:
      'CUDA: adaptive: when allocations outrun the background unmapping of freed ranges (the driver serializes it, ~50 us a range), a freed range whose canary checked clean goes back out still mapped (counted as recycled; a stale pointer into it then no longer faults). strict: every freed range is unmapped and quarantined (about 1.4x the cost of adaptive in a training loop: see bench/README.md).',
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    needsDevice: true,
    native: { field: 'cuda_quarantine', ctype: 'CudaQuarantine' },
  }),
  row({
    key: 'trackLaunches',
    name: 'track-launches',
    value: booleanValue,
    default: true,
    description:
      "CUDA: record every kernel launch (kernel, stream, JS or Python call site, arguments pointing into guarded allocations), to name the kernel behind an illegal address and to report cross-stream-free. Through CUPTI (CUDA toolkit, or PyTorch's CUDA wheels); without it, or with a profiler holding it, through the driver functions the program looks up; when neither can run the run says so once and goes on.",
    surfaces: { runner: true, guardRun: true, api: true, python: true },
    needsDevice: true,
    native: { field: 'track_launches', ctype: 'bool' },
  }),
  row({
    key: 'launchBlocking',
    name: 'launch-blocking',
    value: booleanValue,
    default: false,
    description:
      "CUDA: synchronize after every kernel launch, so an illegal address names exactly the launch that faulted (slower). The cross-stream check still judges the program's own ordering.",
    surfaces: { runner: true, guardRun: true, api: true, python: true, replay: true },
    needsDevice: true,
    native: { field: 'launch_blocking', ctype: 'bool' },
  }),
  row({
    key: 'dumpInputs',
    name: 'dump-inputs',
    value: textValue('kernel glob') as ValueKind<string | undefined>,
    default: undefined as string | undefined,
    defaultText: 'unset',
    description:
      "CUDA: before each launch of a kernel whose name matches the glob (`'*FillInclusive*'`: the name as the driver has it, or demangled as reports show it), save the guarded allocations its pointer arguments point into, as the GPU has them then, to `inputs/` in the run's report directory, with an index (`inputs/index-<pid>.jsonl`: kernel, launch number, call site, test, argument, allocation, file); an illegal-address report lists the saved inputs of its suspect launches. Bounded: the first 16 MiB of each allocation (a larger one is saved truncated, marked so), at most 1 GiB per process (later launches are listed in the index as not saved). Needs launch tracking.",
    surfaces: { runner: true, guardRun: true, api: true, python: true, replay: true },
    needsDevice: true,
    native: { field: 'dump_inputs', ctype: 'std::string' },
  }),
  row({
    key: 'forceMprotect',
    name: 'force-mprotect',
    value: booleanValue,
    default: false,
    description: 'Diagnostics: use mprotect guard pages even where the kernel has MADV_GUARD_INSTALL.',
    surfaces: { api: true },
    processEnv: 'MATE_GUARD_FORCE_MPROTECT',
    native: { field: 'force_mprotect', ctype: 'bool' },
  }),
  row({
    key: 'keptClose',
    name: 'kept-close',
    value: choiceValue(KEPT_CLOSES, 'kept-slot close'),
    default: 'auto' as KeptClose,
    description:
      "Tuning: how a freed one-page native allocation's kept slot is closed (MADV_GUARD_INSTALL kernels). mprotect keeps the page (cheapest from one thread, but each close takes the mmap lock for writing); markers installs a guard marker (the page is given back and the next use faults in a zeroed one, but closes from several threads run at once); auto uses markers while native allocations come from threads in turn (at least 1 in 16 of the last 1,024 from another thread than the one before), mprotect otherwise.",
    surfaces: { api: true },
    processEnv: 'MATE_GUARD_KEPT_CLOSE',
    native: { field: 'kept_close', ctype: 'std::string' },
  }),
  row({
    key: 'maxLiveMprotect',
    name: 'max-live-mprotect',
    value: integerValue(0, 2 ** 31),
    default: 0,
    defaultText: '0 (from vm.max_map_count)',
    description:
      'Cap on live guarded allocations with mprotect guard pages (each costs up to two kernel mappings); 0 derives it from vm.max_map_count, leaving most of it to Node.',
    surfaces: { api: true },
    processEnv: 'MATE_GUARD_MAX_LIVE_MPROTECT',
    native: { field: 'max_live_mprotect', ctype: 'uint32_t' },
  }),
] as const;

type Row = (typeof SETTINGS)[number];
type ValueOf<R> = R extends SettingRow<string, infer T> ? T : never;

/** Every setting, resolved. */
export type GuardSettings = { [R in Row as R['key']]: ValueOf<R> };
export type SettingKey = keyof GuardSettings;

type KeysOn<S extends keyof Surfaces> = Extract<Row, { surfaces: { [P in S]: true } }>['key'];
/** The settings a runner takes as flags, environment variables and options. */
export type RunnerSettingKey = KeysOn<'runner'>;
/** The settings installGuardAllocator takes. */
export type AllocatorSettingKey = KeysOn<'api'>;

export function rowsOn(surface: keyof Surfaces): readonly SettingRow[] {
  return (SETTINGS as readonly SettingRow[]).filter((r) => r.surfaces[surface]);
}

/** The defaults, with a process-wide environment default where a row has one. */
export function defaultSettings(env: NodeJS.ProcessEnv = process.env): GuardSettings {
  const out: Record<string, unknown> = {};
  for (const r of SETTINGS as readonly SettingRow[]) {
    const fromEnv = r.processEnv ? env[r.processEnv] : undefined;
    out[r.key] = fromEnv !== undefined && fromEnv !== '' ? r.value.parse(fromEnv, r.processEnv!) : r.default;
  }
  return out as GuardSettings;
}

// The spellings of a row every runner shares, derived from its name; how a
// runner's own config spells a setting is its adapter's (`spelling`).

export const spell = {
  /** `--guard-mode` */
  runnerFlag: (r: SettingRow) => `--guard-${r.name}`,
  /** `GUARD_MODE`, after `MATE_<RUNNER>_` */
  envSuffix: (r: SettingRow) => `GUARD_${r.name.toUpperCase().replace(/-/g, '_')}`,
  /** `MATE_VITEST_`, `MATE_NODE_TEST_`: a runner's prefix of its environment variables. */
  envPrefix: (runner: RunnerName) => `MATE_${runner.toUpperCase().replace(/-/g, '_')}_`,
  /** `MATE_VITEST_GUARD_MODE`, `MATE_NODE_TEST_GUARD_MODE` */
  env: (runner: RunnerName, r: SettingRow) => `${spell.envPrefix(runner)}${spell.envSuffix(r)}`,
  /** `--mode` (mate guard-run) */
  guardRunFlag: (r: SettingRow) => `--${r.name}`,
};
