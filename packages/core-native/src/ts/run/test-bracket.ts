// What every runner plugin does around each test, written once: name the
// test in reports, and split the violations found into the test's own and
// those done outside any test.
import { isNotice } from '../report/notices';
import {
  checkCanaries,
  flushGuardStats,
  isGuardAllocatorActive,
  setCurrentTest,
  type GuardViolation,
} from '../install/install';
import { noteTestStart, tagSkipsSoFar } from './process-stats';

// Damage found between tests (module code, a hook, a buffer the collector
// freed after its test ended) is not the next test's doing: it is kept here
// until the plugin fails the scope it belongs to (the file, or the run)
// with outsideTestsError, never pinned on an innocent test.
let outside: GuardViolation[] = [];

// A run's suppressions marked these: counted in the summary, never a failure.
const unsuppressed = (found: readonly GuardViolation[]) => found.filter((v) => !v.event.suppressed);

// Tag skips already in this process's counters file. A test that follows
// skipped ones writes them first: a guard fault in it would otherwise take
// them with it (a dying process's event carries allocation counts only), and
// the summary would say "0 tests skipped by tag".
let flushedTagSkips = 0;
function flushNewTagSkips(): void {
  const skips = tagSkipsSoFar();
  if (skips === flushedTagSkips) return;
  flushedTagSkips = skips;
  flushGuardStats();
}

/** Names the test in reports and starts its canary scope. */
export function beginGuardedTest(name: string): void {
  if (!isGuardAllocatorActive()) return;
  noteTestStart();
  flushNewTagSkips();
  outside.push(...unsuppressed(checkCanaries()));
  setCurrentTest(name);
}

/**
 * Ends a test: violations of the allocations it made and damage found at
 * free while it ran, less those the run's suppressions match. A non-empty
 * result must fail the test.
 */
export function endGuardedTest(): GuardViolation[] {
  if (!isGuardAllocatorActive()) return [];
  const found = unsuppressed(checkCanaries());
  setCurrentTest(null);
  flushCountersNowAndThen();
  return found;
}

// A process killed with no chance to report (SIGKILL: the OOM killer, a
// runner's timeout) still leaves its counters for the summary, as of a
// recent test's end: written at most every FLUSH_MS (one small file).
const FLUSH_MS = 2000;
let lastFlush = 0;
function flushCountersNowAndThen(): void {
  const now = Date.now();
  if (now - lastFlush < FLUSH_MS) return;
  lastFlush = now;
  flushGuardStats();
}

/** The running test's violations so far (a check inside the test, before its end), less suppressed ones. */
export function checkGuardedTest(): GuardViolation[] {
  if (!isGuardAllocatorActive()) return [];
  return unsuppressed(checkCanaries());
}

/**
 * Damage found outside any test since the last call (checked now too).
 * `all` at a file's or run's end: every byte of every live allocation,
 * however many (a test's end reads older allocations only near their data,
 * and only while few are live), so damage to a long-lived buffer is found
 * before the worker goes.
 */
export function takeOutsideDamage(options: { all?: boolean } = {}): GuardViolation[] {
  if (!isGuardAllocatorActive()) return [];
  const found = [...outside, ...unsuppressed(checkCanaries({ all: options.all === true }))];
  outside = [];
  return found;
}

function guardError(found: readonly GuardViolation[], lead = ''): Error {
  // An out-of-memory is no memory bug: the test ran out of GPU memory, and the report says what the guard held.
  const what = found.every((v) => isNotice(v.event))
    ? 'that the GPU ran out of memory'
    : found.length === 1
      ? 'a memory violation'
      : `${found.length} memory violations`;
  const err = new Error(`${lead}mate-guard found ${what}:\n${found.map((v) => v.text).join('')}`);
  err.name = 'GuardViolationError';
  err.stack = `${err.name}: ${err.message}`; // the report is the useful part
  return err;
}

/** An Error that fails a test with the reports as its message. */
export function violationError(found: readonly GuardViolation[]): Error {
  return guardError(found);
}

/**
 * The Error for damage done outside any test; `scope` says what it fails
 * (`this file`, `this run`).
 */
export function outsideTestsError(found: readonly GuardViolation[], scope: string): Error {
  return guardError(found, `outside any test (module code or beforeAll/afterAll hooks of ${scope}): `);
}
