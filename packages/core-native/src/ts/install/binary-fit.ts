// Which native binary this machine can use: the prebuilt one shipped in the
// package (prebuilds/<target>/, with a manifest stating its libc floor) or
// the one built from source (build/Release/, by `mate build-native`, or by
// the checkout's npm install). Shared by the loader (native.ts, device.ts),
// `mate build-native` and scripts/prebuild.js, so all say the same thing
// about the same file.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The targets with prebuilt binaries and a working source build (glibc Linux on x86-64 and arm64). */
export const SUPPORTED_TARGETS: readonly string[] = ['linux-x64', 'linux-arm64'];

/** The target the packing machine builds natively; the others are cross built (scripts/prebuild.js). */
export const NATIVE_BUILD_TARGET = 'linux-x64';

/** prebuilds/<target>/manifest.json, written by scripts/prebuild.js at pack time. */
export const MANIFEST = 'manifest.json';

export interface PrebuiltManifest {
  /** e.g. "linux-x64": the directory's name, repeated to catch a misplaced copy. */
  target: string;
  /** The highest GLIBC_x.y symbol version the binaries import (their floor). */
  glibc: string;
  /** The same for libstdc++ (GLIBCXX_3.4.n), informative: the load attempt tells. */
  glibcxx: string | null;
  napi: number;
  files: string[];
}

export interface Host {
  platform: NodeJS.Platform;
  arch: string;
  /** glibc's version where the C library is glibc; null on musl and off Linux. */
  glibc: string | null;
  /** e.g. linux-x64, linux-x64-musl, linux-arm64, darwin-arm64. */
  target: string;
}

interface ReportHeader {
  glibcVersionRuntime?: string;
}

let host: Host | undefined;

/** This process's host (once per process: a diagnostic report costs a few ms). */
export function currentHost(): Host {
  if (host) return host;
  const header = (process.report?.getReport() as { header?: ReportHeader } | undefined)?.header;
  const glibc = process.platform === 'linux' ? (header?.glibcVersionRuntime ?? null) : null;
  const libcSuffix = process.platform === 'linux' && glibc === null ? '-musl' : '';
  host = {
    platform: process.platform,
    arch: process.arch,
    glibc,
    target: `${process.platform}-${process.arch}${libcSuffix}`,
  };
  return host;
}

/**
 * Why mate-guard cannot run on `host` at all (null where it can): the guard
 * pages, fault decoding and import patching are Linux code for x86-64 and
 * arm64, with glibc. The README's "Platforms" has the plan.
 */
export function unsupportedReason(host: Host): string | null {
  if (SUPPORTED_TARGETS.includes(host.target)) return null;
  return `${host.target} is not supported: mate-guard runs on Linux x86-64 and arm64 with glibc only (see "Platforms" in the README of @mate-guard/core)`;
}

/** Compares dotted versions ("2.35" vs "2.4"): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** ELF e_machine of each Node arch we could ship for. */
const ELF_MACHINE: Record<string, number> = { x64: 0x3e, arm64: 0xb7 };

/**
 * Why `file` is not a shared object for `arch` (null when its header says it
 * is): catches a truncated or corrupt download and a binary of another
 * architecture before dlopen, which would only say "invalid ELF header".
 */
export function elfProblem(file: string, arch: string): string | null {
  const head = Buffer.alloc(64);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return 'missing';
  }
  let n: number;
  let size: number;
  try {
    n = fs.readSync(fd, head, 0, head.length, 0);
    size = fs.fstatSync(fd).size;
  } finally {
    fs.closeSync(fd);
  }
  if (n < head.length || head.readUInt32BE(0) !== 0x7f454c46) return 'not an ELF shared object (corrupt or truncated)';
  if (head[4] !== 2 || head[5] !== 1) return 'not a 64-bit little-endian ELF file';
  const machine = head.readUInt16LE(18);
  if (machine !== ELF_MACHINE[arch]) return `built for ELF machine 0x${machine.toString(16)}, not ${arch}`;
  // The section header table ends the file: a download cut short loses it,
  // and dlopen of such a file can die of SIGBUS instead of failing.
  const sectionsEnd = Number(head.readBigUInt64LE(0x28)) + head.readUInt16LE(0x3a) * head.readUInt16LE(0x3c);
  if (sectionsEnd > size) return `truncated (${size} bytes, its headers say at least ${sectionsEnd})`;
  return null;
}

/** The manifest of prebuilds/<target>/, or why it is unusable. */
export function readManifest(dir: string): PrebuiltManifest | string {
  const file = path.join(dir, MANIFEST);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return `no ${MANIFEST}`;
  }
  try {
    const m = JSON.parse(text) as PrebuiltManifest;
    if (typeof m.target !== 'string' || typeof m.glibc !== 'string') return `${MANIFEST} lacks target or glibc`;
    return m;
  } catch {
    return `${MANIFEST} is not JSON`;
  }
}

/** Why the prebuilt `name` in prebuilds/<host target>/ cannot be used here (null: try it). */
export function prebuiltProblem(packageRoot: string, name: string, host: Host = currentHost()): string | null {
  const dir = path.join(packageRoot, 'prebuilds', host.target);
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) return 'not shipped for this platform';
  const manifest = readManifest(dir);
  if (typeof manifest === 'string') return manifest;
  if (manifest.target !== host.target) return `its manifest says it is for ${manifest.target}`;
  if (host.glibc === null) return 'this system has no glibc';
  if (compareVersions(host.glibc, manifest.glibc) < 0)
    return `needs glibc >= ${manifest.glibc}, this system has ${host.glibc}`;
  return elfProblem(file, host.arch);
}

export interface Candidate {
  /** Shown in messages: relative to the package, e.g. prebuilds/linux-x64/mate_guard.node. */
  label: string;
  file: string;
  /** Why it is skipped without trying to load it; null: load it. */
  problem: string | null;
}

/** build/<target>/, where scripts/prebuild.js cross builds a target other than the packing machine's. */
export function crossBuildDir(target: string): string {
  return path.join('build', target);
}

/**
 * Where `name` may be, in the order to try: prebuilt first, then the source
 * build, then (only where one exists: a checkout that cross built it) the
 * cross build for this target.
 */
export function binaryCandidates(packageRoot: string, name: string, host: Host = currentHost()): Candidate[] {
  const prebuilt = path.join('prebuilds', host.target, name);
  const built = path.join('build', 'Release', name);
  const builtFile = path.join(packageRoot, built);
  const candidates: Candidate[] = [
    { label: prebuilt, file: path.join(packageRoot, prebuilt), problem: prebuiltProblem(packageRoot, name, host) },
    {
      label: built,
      file: builtFile,
      problem: fs.existsSync(builtFile) ? elfProblem(builtFile, host.arch) : 'not built from source',
    },
  ];
  const cross = path.join(crossBuildDir(host.target), 'Release', name);
  const crossFile = path.join(packageRoot, cross);
  if (fs.existsSync(crossFile))
    candidates.push({ label: cross, file: crossFile, problem: elfProblem(crossFile, host.arch) });
  return candidates;
}

/** The first line of an error message (dlopen's own are one line; a stack is not wanted). */
export function firstLine(message: string): string {
  return message.split('\n', 1)[0].trim();
}

/**
 * What a user can do when no binary loads on a supported platform. The
 * command is spelled with this package's own path: `npx mate` finds no
 * `mate` where the package manager did not link it (pnpm links only the
 * project's direct dependencies) and would fetch another package of that
 * name.
 */
export function rebuildHint(packageRoot: string): string {
  return `build it from source: install cmake >= 3.15, make and a C++17 compiler (g++ >= 9 or clang++ >= 10), then run: node ${path.join(packageRoot, 'bin', 'mate.js')} build-native`;
}
