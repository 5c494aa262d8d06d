// Where a violation happened, in source terms, for the formats CI tools
// read (SARIF, workflow annotations): its stacks as source frames (native
// ones as symbolized, inlined calls unfolded; JS ones cut to the user's
// frames), and the sites those tools point at: the bad access, the
// allocation, the free, the test.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { DeviceLaunch, NativeStack, ViolationEvent } from './event';
import { parseJsFrame, trimJsStack } from './js-stack';
import { symbolizeEvent } from './render';
import type { RunPlace, SourcePaths } from './source-paths';
import { testPathFile } from './test-path';
import { isSystemModule } from './suppressions';

export interface SourceFrame {
  function?: string;
  /** As recorded: absolute, or (system libraries' debug info) relative to a build directory nobody has. */
  file?: string;
  line?: number;
  column?: number;
  /** Native frames: the object the code is in, and the offset in it. */
  module?: string;
  offset?: number;
  /** The file relative to the repository (forward slashes), when it lies in it. */
  repoPath?: string;
}

/** A place in the repository. */
export interface Site {
  path: string;
  line?: number;
  column?: number;
  function?: string;
}

export interface EventStack {
  /** What the stack is: `access`, `allocation`, `free`, ... */
  label: string;
  frames: SourceFrame[];
}

export interface EventSites {
  /**
   * The bad access (a fault; a bad free's call; a death's stack), or for
   * canary damage its rerun's fault, or for device reports the launch or
   * the free: the user's first frame in the repository.
   */
  access?: Site;
  /** The access site is the rerun's (the run itself saw damage, not the access). */
  accessInRerun?: boolean;
  allocation?: Site;
  free?: Site;
  /** The test's file, at the line where its stacks ran in it (when one did). */
  test?: Site & { name: string };
  /** Where CI tools show it: the access, else the test's file (JS-only stacks), else the allocation. */
  primary?: Site;
  stacks: EventStack[];
}

/** Native frames down to the first frame in the Node runtime (where it called into the addon). */
function framesToRuntime<T extends { module?: string | null }>(frames: readonly T[]): T[] {
  const runtime = fs.realpathSync(process.execPath);
  const isRuntime = (m: string | null | undefined) => !!m && (m === runtime || path.basename(m) === 'node');
  const firstRuntime = frames.findIndex((f, i) => i > 0 && isRuntime(f.module));
  return firstRuntime < 0 ? [...frames] : frames.slice(0, firstRuntime + 1);
}

const inNodeModules = (p: string) => /(^|\/)node_modules\//.test(p);

/** Native frames, inlined calls unfolded (innermost first), down to the runtime. */
function nativeFrames(stack: NativeStack | null | undefined, paths: SourcePaths, run: RunPlace | undefined): SourceFrame[] {
  const out: SourceFrame[] = [];
  for (const f of framesToRuntime(stack?.frames ?? [])) {
    const machine = { ...(f.module ? { module: f.module } : {}), offset: f.offset };
    for (const loc of [f, ...(f.inlined ?? [])]) {
      // Only an absolute file is a place: a relative one is relative to a build directory (libc's `./malloc/malloc.c`).
      const repoPath = loc.file && path.isAbsolute(loc.file) ? paths.relative(loc.file, run) : undefined;
      out.push({
        ...(loc.function ? { function: loc.function } : {}),
        ...(loc.file ? { file: loc.file } : {}),
        ...(loc.line ? { line: loc.line } : {}),
        ...(loc.column ? { column: loc.column } : {}),
        ...machine,
        ...(repoPath ? { repoPath } : {}),
      });
    }
  }
  return out;
}

/** A JS (or Python, written V8-style) stack's user frames. */
function jsFrames(stack: string | null | undefined, paths: SourcePaths, run: RunPlace | undefined): SourceFrame[] {
  if (!stack) return [];
  const out: SourceFrame[] = [];
  for (const line of trimJsStack(stack).frames) {
    const f = parseJsFrame(line);
    if (!f) continue;
    const repoPath = path.isAbsolute(f.file) ? paths.relative(f.file, run) : undefined;
    out.push({ ...f, ...(repoPath ? { repoPath } : {}) });
  }
  return out;
}

/** The first frame in the repository that is the user's: not a dependency's, a system library's or mate-guard's. */
function siteOf(frames: readonly SourceFrame[]): Site | undefined {
  const ours = frames.filter((f) => f.repoPath && !(f.module && isSystemModule(f.module)));
  const f = ours.find((x) => !inNodeModules(x.repoPath!)) ?? ours[0];
  if (!f) return undefined;
  return { path: f.repoPath!, ...(f.line ? { line: f.line } : {}), ...(f.column ? { column: f.column } : {}), ...(f.function ? { function: f.function } : {}) };
}

/** The launches a device report suspects: the one that faulted, else those given guarded pointers. */
function suspectLaunches(e: ViolationEvent): DeviceLaunch[] {
  const list = e.launches?.list ?? [];
  const faulted = list.filter((l) => l.faulted);
  return faulted.length ? faulted : list.filter((l) => l.argCount > 0);
}

const accessLabel = (e: ViolationEvent) =>
  e.death ? 'stack' : e.kind === 'double-free' ? 'freed again at' : e.kind === 'invalid-free' ? 'free called at' : 'access';

/** The event's sites and stacks; its native frames are symbolized first where its process left them raw (once, kept in the event). */
export function eventSites(e: ViolationEvent, paths: SourcePaths, run?: RunPlace): EventSites {
  symbolizeEvent(e);
  const stacks: EventStack[] = [];
  const add = (label: string, frames: SourceFrame[]) => {
    if (frames.length) stacks.push({ label, frames });
    return frames;
  };
  const a = e.allocation;
  const accessFrames = add(accessLabel(e), nativeFrames(e.accessStack, paths, run));
  const fault = e.rerun?.fault;
  const rerunFrames = add(`access, in the rerun in ${e.rerun?.mode} mode, alignment ${e.rerun?.alignment}`, nativeFrames(fault?.accessStack, paths, run));
  const launchFrames = suspectLaunches(e).map((l) => add(`launch ${l.number} of ${l.kernel ?? 'an unknown kernel'}`, jsFrames(l.site, paths, run)));
  const allocFrames = add('allocated at', [...nativeFrames(a?.allocFrames, paths, run), ...jsFrames(a?.allocStack, paths, run)]);
  const freeFrames = add(e.kind === 'double-free' ? 'first freed at' : 'freed at', [...nativeFrames(a?.freeFrames, paths, run), ...jsFrames(a?.freeStack, paths, run)]);

  const allocation = siteOf(allocFrames);
  const free = a?.freed ? siteOf(freeFrames) : undefined;
  const own = siteOf(accessFrames);
  let access = own ?? siteOf(rerunFrames);
  const accessInRerun = !own && access !== undefined;
  for (const frames of launchFrames) access ??= siteOf(frames);
  // A free on the wrong stream is the bad call.
  if (e.kind === 'cross-stream-free') access ??= free;

  let test: EventSites['test'];
  const name = e.test ?? a?.allocTest ?? null;
  const file = name ? testPathFile(name) : undefined;
  const testPath = file ? paths.testFile(file, run) : undefined;
  if (name && testPath) {
    // The line where one of its stacks ran in the test's own file.
    const there = [...allocFrames, ...freeFrames, ...launchFrames.flat()].find((f) => f.repoPath === testPath && f.line);
    test = { name, path: testPath, ...(there?.line ? { line: there.line } : {}), ...(there?.column ? { column: there.column } : {}), ...(there?.function ? { function: there.function } : {}) };
  }
  const primary = access ?? (test && { path: test.path, ...(test.line ? { line: test.line } : {}), ...(test.column ? { column: test.column } : {}) }) ?? allocation ?? free;
  return {
    ...(access ? { access } : {}),
    ...(accessInRerun ? { accessInRerun } : {}),
    ...(allocation ? { allocation } : {}),
    ...(free ? { free } : {}),
    ...(test ? { test } : {}),
    ...(primary ? { primary } : {}),
    stacks,
  };
}
