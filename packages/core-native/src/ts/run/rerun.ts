// Canary damage is found late, away from the bad access. A drop-in CLI
// (mate-vitest, mate-jest, mate-mocha, guard-run) then reruns the affected
// test files once in the configuration that makes that access fault (the
// other mode, or a smaller alignment for the alignment gap), and attaches the fault
// report (with its access site) under the original. A CUDA kernel's
// exception (an illegal address, a device-side assert) found without
// launch blocking names only the launches in flight: it reruns with launch
// blocking, which names the one. The run's exit code stays failing
// whatever the rerun finds.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

import { isKernelException, type EventAllocation, type ViolationEvent } from '../report/event';
import { eventBody, rewriteEventFile } from '../report/files';
import { rowsOn, type GuardMode, type GuardSettings, type SettingKey } from '../settings/table';
import { rerunText } from '../report/render';
import { testPathFile } from '../report/test-path';
import { GuardedRun } from './lifecycle';

/** A canary report: damage on an allocation's slack. */
type CanaryEvent = ViolationEvent & { allocation: EventAllocation };

const isCanary = (e: ViolationEvent): e is CanaryEvent =>
  e.kind === 'canary-corruption' && !e.fatal && !e.suppressed && e.allocation !== null;

/** A kernel's exception reported without launch blocking: the launches in flight, not the one. */
const isUnpinnedKernelException = (e: ViolationEvent): boolean =>
  isKernelException(e) && !e.suppressed && e.launches?.blocking !== true;

/** One rerun: a configuration, the files (and tests) to run in it, and the reports it is for. */
export interface RerunGroup {
  mode: GuardMode;
  alignment: number;
  /** Native heap gap damage: the damaged allocation's size, placed byte-exact in the rerun (0: none). */
  nativeExactSize: number;
  /** Device (CUDA) damage: launch blocking in the rerun, so the fault names its kernel. */
  launchBlocking: boolean;
  /** `head mode`, `tail mode with alignment 1` */
  label: string;
  /** Test files, as the reports name them (relative to the working directory). */
  files: string[];
  /** Test paths (`file > suite > test`) of the damage. */
  tests: string[];
  /** Canary reports, or (launch blocking alone) kernel exceptions that named no launch. */
  events: ViolationEvent[];
}

/** How a CLI runs a rerun: its command for these files, in the given environment (the handoff is added). */
export type RerunLauncher = (group: RerunGroup) => {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** guard-run: the command's Node processes install from the handoff themselves. */
  autoInstall?: boolean;
};

const fileOf = (testPath: string | null): string | undefined => (testPath ? testPathFile(testPath) : undefined);

/** The largest power of two that divides `n` (n > 0). */
const lowBit = (n: number): number => {
  let b = 1;
  while (b < 2 ** 30 && n % (b * 2) === 0) b *= 2;
  return b;
};

/**
 * The configuration that makes the access behind a canary report fault.
 * Past the end in tail mode the write landed in the alignment gap: host
 * memory reruns byte-exact; device memory with the largest power of two
 * dividing the size, which puts the end on the guard yet keeps every
 * element (a size is a whole number of them, vector loads included)
 * aligned, where alignment 1 would misalign a kernel's loads. The native
 * heap keeps malloc's 16-byte promise for every other allocation (other
 * modules' code relies on it): only allocations of the damaged one's size
 * are placed byte-exact.
 */
function faultingConfig(
  e: CanaryEvent,
  settings: GuardSettings,
): { mode: GuardMode; alignment: number; nativeExactSize: number; launchBlocking: boolean } {
  const device = e.allocation.backend === 'cuda';
  const launchBlocking = device || settings.launchBlocking;
  const before = (e.damage?.before.bytes ?? 0) > 0;
  const keep = { alignment: settings.alignment, nativeExactSize: settings.nativeExactSize, launchBlocking };
  if (e.allocation.mode === 'tail' && before) return { mode: 'head', ...keep };
  if (e.allocation.mode === 'head') {
    // Tail mode ends a host block short of its guard by the gap its
    // alignment leaves (malloc's 16 bytes for the native heap) unless the
    // size is a multiple of it: that gap closes too, or the rerun finds the
    // same damage again (the report's hint says the same, format_host.cc).
    const { size, alignment, backend } = e.allocation;
    if (device || alignment <= 1 || size % alignment === 0) return { mode: 'tail', ...keep };
    if (backend === 'native-heap') return { mode: 'tail', ...keep, nativeExactSize: size };
    return { mode: 'tail', ...keep, alignment: 1 };
  }
  if (e.allocation.backend === 'native-heap') return { mode: 'tail', ...keep, nativeExactSize: e.allocation.size };
  const alignment = device && e.allocation.size > 0 ? Math.min(lowBit(e.allocation.size), e.allocation.alignment) : 1;
  return { mode: 'tail', alignment, nativeExactSize: settings.nativeExactSize, launchBlocking };
}

/** A rerun's configuration for a reader: its mode, and the alignment or byte-exact native size it changed (if any). */
function labelOf(mode: GuardMode, alignment: number | undefined, nativeExactSize: number | undefined): string {
  if (nativeExactSize !== undefined)
    return `${mode} mode with the native heap's ${nativeExactSize}-byte allocations placed byte-exact`;
  return alignment !== undefined ? `${mode} mode with alignment ${alignment}` : `${mode} mode`;
}

/** The reruns the canary reports of a run call for, one per configuration. */
export function planReruns(events: readonly ViolationEvent[], settings: GuardSettings): RerunGroup[] {
  const groups = new Map<string, RerunGroup>();
  for (const e of events) {
    if (!isCanary(e)) continue;
    const { mode, alignment, nativeExactSize, launchBlocking } = faultingConfig(e, settings);
    const key = `${mode}/${alignment}/${nativeExactSize}/${launchBlocking}`;
    let g = groups.get(key);
    if (!g) {
      const label = labelOf(
        mode,
        alignment !== settings.alignment ? alignment : undefined,
        nativeExactSize !== settings.nativeExactSize ? nativeExactSize : undefined,
      );
      g = { mode, alignment, nativeExactSize, launchBlocking, label, files: [], tests: [], events: [] };
      groups.set(key, g);
    }
    g.events.push(e);
    addTests(g, [e.test, e.allocation.allocTest]);
  }
  // Kernel exceptions: the same configuration, with launch blocking.
  for (const e of events) {
    if (!isUnpinnedKernelException(e)) continue;
    const key = `launch-blocking/${settings.mode}/${settings.alignment}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        mode: settings.mode,
        alignment: settings.alignment,
        nativeExactSize: settings.nativeExactSize,
        launchBlocking: true,
        label: 'launch blocking',
        files: [],
        tests: [],
        events: [],
      };
      groups.set(key, g);
    }
    g.events.push(e);
    addTests(g, [e.test]);
  }
  return [...groups.values()];
}

function addTests(g: RerunGroup, tests: readonly (string | null)[]): void {
  for (const t of tests) {
    const file = fileOf(t);
    if (t && !g.tests.includes(t)) g.tests.push(t);
    if (file && !g.files.includes(file)) g.files.push(file);
  }
}

const RERUN_TIMEOUT_MS = 10 * 60 * 1000;

interface RerunResult {
  found: ViolationEvent[];
  /** Tests its processes started (a runner that selected none of them: 0). */
  testsStarted: number;
  /** Ended by a signal (a timeout, the OOM killer): it may have run tests that left no counters. */
  killed: boolean;
}

/** Runs one rerun as a child run of ours: the violations it found, the tests it ran. */
async function runGroup(group: RerunGroup, launch: RerunLauncher, settings: GuardSettings): Promise<RerunResult> {
  const spec = launch(group);
  const env = { ...process.env, ...spec.env };
  const runnerKeys = rowsOn('runner').map((r) => r.key as SettingKey);
  // Every runner setting is explicit: a Jest file's options must not change the mode back.
  const run = GuardedRun.start({
    runner: 'rerun',
    settings: {
      ...settings,
      enabled: true,
      mode: group.mode,
      alignment: group.alignment,
      nativeExactSize: group.nativeExactSize,
      launchBlocking: group.launchBlocking,
      rerun: false,
    },
    explicit: runnerKeys,
    env,
    autoInstall: spec.autoInstall,
  });
  const killed = await new Promise<boolean>((resolve) => {
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env, stdio: ['ignore', 'ignore', 'ignore'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), RERUN_TIMEOUT_MS);
    child.on('error', () => resolve(false));
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      resolve(signal !== null);
    });
  });
  const { violations: found, processes } = run.read();
  fs.rmSync(run.dir, { recursive: true, force: true });
  return { found, testsStarted: processes.reduce((n, p) => n + (p.testsStarted ?? 0), 0), killed };
}

/** The rerun's events that concern one original report: the same test, else the same file (else, with no test known, the first). */
function sameTest(original: ViolationEvent, found: readonly ViolationEvent[]): ViolationEvent | undefined {
  const tests = [original.test, original.allocation?.allocTest].filter((t): t is string => !!t);
  return (
    found.find((f) => f.test !== null && tests.includes(f.test)) ??
    found.find((f) =>
      tests.some((t) => fileOf(t) === fileOf(f.test) || fileOf(t) === fileOf(f.allocation?.allocTest ?? null)),
    ) ??
    (tests.length === 0 ? found[0] : undefined)
  );
}

/** The rerun's fault for one original report. */
function faultFor(original: CanaryEvent, found: readonly ViolationEvent[]): ViolationEvent | undefined {
  // A host fault kills its process; a CUDA fault (illegal-address) is found
  // by the device guard. A death of another cause is not the access sought.
  return sameTest(
    original,
    found.filter((f) => (f.fatal && !f.death) || f.kind === 'illegal-address'),
  );
}

/** A death of another cause in the rerun (a deadly signal, an uncaught exception) that kept it from the access. */
function deathFor(original: CanaryEvent, found: readonly ViolationEvent[]): ViolationEvent | undefined {
  const deaths = found.filter((f) => f.fatal && f.death);
  return sameTest(original, deaths) ?? deaths[0];
}

/**
 * Reruns what the run's canary reports call for and returns the text to
 * print: one announcing line per rerun, then under each original report
 * the rerun's fault report, or that the rerun did not fault. The original
 * event files get the result too (`rerun`).
 */
export async function rerunCanaryReports(
  events: readonly ViolationEvent[],
  settings: GuardSettings,
  launch: RerunLauncher,
  offFlag = '--no-guard-rerun',
): Promise<string> {
  let text = '';
  for (const group of planReruns(events, settings)) {
    const what = group.files.length ? group.files.join(', ') : 'the command';
    const canaries = group.events.filter(isCanary);
    const kernels = group.events.filter((e) => !isCanary(e));
    const behind = canaries.length
      ? `find the access behind ${canaries.length === 1 ? 'a canary report' : `${canaries.length} canary reports`}`
      : `name the launch behind ${kernels.length === 1 ? `the ${kernels[0].kind} report` : `${kernels.length} kernel exception reports`}`;
    text += `[mate-guard] rerunning ${what} in ${group.label} to ${behind} (off: ${offFlag})\n`;
    const { found, testsStarted, killed } = await runGroup(group, launch, settings);
    // Damage named after tests, and the rerun started none, found nothing, ended by itself: the runner selected none of them.
    const ranNoTest = group.tests.length > 0 && testsStarted === 0 && found.length === 0 && !killed;
    for (const original of kernels) text += kernelRerunText(original, found, group, ranNoTest);
    for (const original of canaries) {
      const fault = faultFor(original, found);
      const death = fault ? undefined : deathFor(original, found);
      const exact =
        group.nativeExactSize !== settings.nativeExactSize ? { nativeExactSize: group.nativeExactSize } : {};
      // Filed, then rendered from the filed form: the terminal and `mate report` show the same words.
      const filed: ViolationEvent = {
        ...original,
        rerun: {
          mode: group.mode,
          alignment: group.alignment,
          ...exact,
          fault: fault ? eventBody(fault) : null,
          ...(death ? { death: eventBody(death) } : {}),
          ...(!fault && !death && ranNoTest ? { ranNoTest: true as const } : {}),
        },
      };
      text += rerunText(filed);
      if (original.file) rewriteEventFile(original.file, filed);
    }
  }
  return text;
}

/**
 * What the rerun with launch blocking found for a kernel exception: the
 * same exception, now pinned on its launch (the kernel, its call site, the
 * argument, allocation and side), or that it did not happen again.
 */
function kernelRerunText(
  original: ViolationEvent,
  found: readonly ViolationEvent[],
  group: RerunGroup,
  ranNoTest: boolean,
): string {
  const pinned = found.filter((f) => isKernelException(f) && f.launches?.list.some((l) => l.faulted));
  const fault = sameTest(original, pinned) ?? (original.test ? undefined : pinned[0]);
  const filed: ViolationEvent = {
    ...original,
    rerun: {
      mode: group.mode,
      alignment: group.alignment,
      fault: fault ? eventBody(fault) : null,
      ...(!fault && ranNoTest ? { ranNoTest: true as const } : {}),
    },
  };
  const text = rerunText(filed);
  if (original.file) rewriteEventFile(original.file, filed);
  return text;
}
