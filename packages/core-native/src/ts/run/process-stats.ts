// Per-process counters that end up in the run's summary line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { threadId } from 'node:worker_threads';

import type { NativeStats } from '../install/native';
import { passThrough, type PassThroughCounts } from '../install/realm';
import { writeWholeFile } from './private-files';

export interface ProcessGuardStats extends NativeStats {
  pid: number;
  /** worker_threads id (0 on the main thread): threads share the native counters, not these. */
  threadId: number;
  skippedByTag: number;
  /** Tests this process started (a rerun that started none tells nothing about the damage it was for). */
  testsStarted?: number;
  passThrough: PassThroughCounts;
  /** false: written when the guard installed, not at exit (a process killed later leaves only this). */
  exited?: boolean;
}

let skippedByTag = 0;
let testsStarted = 0;

/** The test bracket calls this for every test it starts. */
export function noteTestStart(): void {
  testsStarted++;
}

/** Plugins call this for every test they skip because of a guard tag. */
export function noteTagSkip(): void {
  skippedByTag++;
}

/** Tests skipped by tag in this process so far. */
export function tagSkipsSoFar(): number {
  return skippedByTag;
}

export function processStats(native: NativeStats): ProcessGuardStats {
  return { ...native, pid: process.pid, threadId, skippedByTag, testsStarted, passThrough: { ...passThrough } };
}

// Run directories this process's run owner has read and removed: counters
// written after that (core's exit hook in the owner itself, Jest in band)
// would make the directory again, left behind, counted by nobody.
const closed = new Set<string>();

/** The run ended and its directory went: no more counters into it from this process. */
export function closeReportDir(dir: string): void {
  closed.add(path.resolve(dir));
}

/** Written at exit, read by the runner's main process for the summary. */
export function writeProcessStats(dir: string, stats: ProcessGuardStats): void {
  if (closed.has(path.resolve(dir))) return;
  try {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `stats-${process.pid}-${threadId}.json`);
    writeWholeFile(file, JSON.stringify(stats));
  } catch {
    // The summary is best effort; violations have files of their own.
  }
}
