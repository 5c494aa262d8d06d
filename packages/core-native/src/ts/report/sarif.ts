// SARIF 2.1.0, the format code-scanning services and editors read: one
// result per violation, its rule the report kind, its location the access
// site in the repository, the allocation, the free and the test as related
// locations, every stack as a SARIF stack, and a fingerprint that stays the
// same for the same bug across runs. Report files that could not be read
// are the run's tool notifications.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { UnreadableFile } from '../run/report-dir';
import type { ViolationEvent } from './event';
import { fingerprint } from './fingerprint';
import { REPORT_KINDS, type ReportKind } from './kinds';
import { isNotice } from './notices';
import { plainReportLines } from './plain-report';
import { eventSites, type Site, type SourceFrame } from './sites';
import type { RunPlace, SourcePaths } from './source-paths';

/** Where repository-relative URIs are based: the checkout, wherever it is. */
export const SRCROOT = '%SRCROOT%';

const RULES: Record<ReportKind, { short: string; full: string }> = {
  'heap-buffer-overflow': { short: 'Access past the end of an allocation', full: 'Native code read or wrote past the end of a guarded allocation; the guard page after it faulted at the first bad byte.' },
  'heap-buffer-underflow': { short: 'Access before the start of an allocation', full: 'Native code read or wrote before the start of a guarded allocation; the guard page before it faulted at the first bad byte.' },
  'heap-use-after-free': { short: 'Access to freed memory', full: 'Native code read or wrote an allocation after it was freed (explicitly, or by the garbage collector while native code still held a pointer into it).' },
  'canary-corruption': { short: 'Bytes beside an allocation were overwritten', full: 'The canary bytes between an allocation and its guard page were damaged: a write went out of bounds without reaching the guard page. Found when the allocation was checked or freed, away from the write; the rerun in the configuration that makes it fault names the write.' },
  'invalid-free': { short: 'Free of a pointer malloc/new did not return', full: 'free/delete was given a pointer that is not the start of a live allocation; mate-guard ignored the free.' },
  'double-free': { short: 'Memory freed twice', full: 'An allocation was freed a second time; mate-guard ignored the second free.' },
  'cross-stream-free': { short: 'CUDA memory freed while another stream used it', full: 'A device allocation was freed on one stream while a kernel on another stream used it, and the free was not ordered after that use.' },
  'illegal-address': { short: 'CUDA illegal memory access', full: 'A CUDA kernel accessed memory it must not (past a guarded allocation, or into a freed one); the GPU reported CUDA_ERROR_ILLEGAL_ADDRESS.' },
  'device-assert': { short: 'CUDA device-side assert', full: 'A CUDA kernel\'s own assert failed (an index or bounds check, as torch.compile\'s generated kernels make); the GPU reported CUDA_ERROR_ASSERT and the context is lost.' },
  'device-fault': { short: 'CUDA kernel exception', full: 'A CUDA kernel raised an exception other than an illegal address or an assert (misaligned address, illegal instruction, launch failure); the context is lost.' },
  'wild-access': { short: 'Access to guarded memory no allocation owns', full: 'Native code accessed guarded address space that belongs to no allocation: a wild or stale pointer.' },
  'deadly-signal': { short: 'The process died of a signal', full: 'A guarded process died of a signal that was no guard fault (a crash outside guarded memory, an abort from a failed check or a damaged heap).' },
  'uncaught-exception': { short: 'An uncaught C++ exception ended the process', full: 'A C++ exception left native code uncaught: std::terminate ended the process.' },
  'out-of-memory': { short: 'The GPU ran out of memory under the guard', full: 'A guarded device allocation failed for want of GPU memory after the guard gave back what it keeps; the caller got its out-of-memory error. Not a memory bug: the report gives the guard\'s accounting.' },
};

const ruleName = (kind: string) => kind.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** `a dir/x.cc` -> `a%20dir/x.cc`: a URI reference from a path with forward slashes. */
const uriOf = (p: string) => p.split('/').map(encodeURIComponent).join('/');

type ArtifactLocation = { uri: string; uriBaseId?: string };
type Region = { startLine: number; startColumn?: number };
type PhysicalLocation = { artifactLocation: ArtifactLocation; region?: Region };
type LogicalLocation = { fullyQualifiedName: string; kind: 'function' };
interface Location {
  id?: number;
  physicalLocation?: PhysicalLocation;
  logicalLocations?: LogicalLocation[];
  message?: { text: string };
}

const region = (line?: number, column?: number): { region?: Region } =>
  line ? { region: { startLine: line, ...(column ? { startColumn: column } : {}) } } : {};

const logical = (fn?: string): { logicalLocations?: LogicalLocation[] } =>
  fn ? { logicalLocations: [{ fullyQualifiedName: fn, kind: 'function' }] } : {};

function siteLocation(site: Site, message?: string, id?: number): Location {
  return {
    ...(id !== undefined ? { id } : {}),
    physicalLocation: { artifactLocation: { uri: uriOf(site.path), uriBaseId: SRCROOT }, ...region(site.line, site.column) },
    ...logical(site.function),
    ...(message ? { message: { text: message } } : {}),
  };
}

/** A file outside the repository: its file: URI when absolute; as recorded (a build directory's) when not. */
function artifactOf(file: string, repoPath?: string): ArtifactLocation {
  if (repoPath) return { uri: uriOf(repoPath), uriBaseId: SRCROOT };
  return { uri: path.isAbsolute(file) ? pathToFileURL(file).href : uriOf(file.split(path.sep).join('/')) };
}

function stackFrame(f: SourceFrame) {
  return {
    location: {
      ...(f.file ? { physicalLocation: { artifactLocation: artifactOf(f.file, f.repoPath), ...region(f.line, f.column) } } : {}),
      ...logical(f.function),
    },
    ...(f.module ? { module: path.basename(f.module) } : {}),
    ...(f.module && f.offset !== undefined ? { properties: { moduleOffset: `0x${f.offset.toString(16)}` } } : {}),
  };
}

const sameSite = (a: Site | undefined, b: Site | undefined) => !!a && !!b && a.path === b.path && a.line === b.line;

function result(e: ViolationEvent, paths: SourcePaths, run: RunPlace | undefined) {
  const text = plainReportLines(e).join('\n'); // first: renders (and symbolizes) an event its process left unrendered
  const sites = eventSites(e, paths, run);
  const related: Location[] = [];
  const relate = (site: Site | undefined, message: string) => {
    if (site && !sameSite(site, sites.primary)) related.push(siteLocation(site, message, related.length + 1));
  };
  relate(sites.allocation, 'allocated here');
  relate(sites.free, e.kind === 'double-free' ? 'first freed here' : 'freed here');
  if (sites.test) related.push(siteLocation(sites.test, `test: ${sites.test.name}`, related.length + 1));
  const id = fingerprint(e, sites);
  const s = e.suppressed;
  return {
    ruleId: e.kind,
    ruleIndex: REPORT_KINDS.indexOf(e.kind),
    // An out-of-memory is the program's failure, not a memory bug.
    level: isNotice(e) ? 'note' : 'error',
    message: { text },
    ...(sites.primary ? { locations: [siteLocation(sites.primary)] } : {}),
    ...(related.length ? { relatedLocations: related } : {}),
    ...(sites.stacks.length ? { stacks: sites.stacks.map((st) => ({ message: { text: st.label }, frames: st.frames.map(stackFrame) })) } : {}),
    fingerprints: { 'mateGuard/v1': id },
    partialFingerprints: { 'mateGuardBug/v1': id },
    ...(s ? { suppressions: [{ kind: 'external', status: 'accepted', justification: `suppressed by ${s.file}:${s.line} (${s.rule})` }] } : {}),
    properties: { ...(e.test ? { test: e.test } : {}), fatal: e.fatal },
  };
}

let version: string | undefined;
function toolVersion(): string {
  version ??= (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

export interface SarifInput {
  /** Each violation once, with where its run ran (undefined: a run that did not record it). */
  events: ReadonlyArray<{ event: ViolationEvent; run?: RunPlace }>;
  unreadable: readonly UnreadableFile[];
  paths: SourcePaths;
}

/** The SARIF log (one run of mate-guard), as a JSON-ready object. */
export function sarifLog({ events, unreadable, paths }: SarifInput): object {
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: {
        driver: {
          name: 'mate-guard',
          semanticVersion: toolVersion(),
          rules: REPORT_KINDS.map((kind) => ({
            id: kind,
            name: ruleName(kind),
            shortDescription: { text: RULES[kind].short },
            fullDescription: { text: RULES[kind].full },
            defaultConfiguration: { level: 'error' },
            properties: { tags: ['memory-safety', 'native'], precision: 'very-high', 'problem.severity': 'error' },
          })),
        },
      },
      originalUriBaseIds: { [SRCROOT]: { uri: pathToFileURL(paths.here + path.sep).href } },
      columnKind: 'utf16CodeUnits',
      invocations: [{
        executionSuccessful: unreadable.length === 0,
        ...(unreadable.length ? {
          toolExecutionNotifications: unreadable.map((u) => ({
            level: u.holds === 'report' ? 'error' : 'warning',
            message: { text: u.holds === 'report' ? `cannot read report file: ${u.why}; counted as a violation that could not be read` : `cannot read counters file: ${u.why}` },
            locations: [{ physicalLocation: { artifactLocation: { uri: pathToFileURL(u.file).href } } }],
          })),
        } : {}),
      }],
      results: events.map(({ event, run }) => result(event, paths, run)),
    }],
  };
}
