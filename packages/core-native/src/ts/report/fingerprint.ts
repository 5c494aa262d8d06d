// A violation's fingerprint: the same bug gets the same one in every run,
// on every machine (SARIF's fingerprints: a code-scanning service matches
// results across runs by them). Made of what names the bug, never of what
// changes from run to run: no pid, address, time or allocation number.
import { createHash } from 'node:crypto';

import { shortFunctionName } from '../symbolize/frame-lines';
import type { ViolationEvent } from './event';
import type { EventSites, Site } from './sites';

const place = (s: Site | undefined) => (s ? `${s.path}:${s.line ?? ''} ${s.function ? shortFunctionName(s.function) : ''}` : '');

/** 32 hex digits: the kind, the access site (file:line and function, relative to the repository) and the allocation site. */
export function fingerprint(e: ViolationEvent, sites: EventSites): string {
  // A rerun's fault is not part of it: a run without the rerun (or one that did not fault) names the same bug.
  const access = sites.accessInRerun ? undefined : sites.access;
  const parts = [e.kind, place(access), place(sites.allocation)];
  // Canary damage on either side of one allocation is two bugs.
  if (e.damage) parts.push(e.damage.before.bytes ? 'before' : 'after');
  // Nothing in the repository named it: the test does.
  if (!access && !sites.allocation) parts.push(sites.test?.name ?? e.test ?? '');
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);
}
