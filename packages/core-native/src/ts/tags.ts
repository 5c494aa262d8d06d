// The one tag policy: which tags skip a test while guarding is on, and why.
export const GUARD_INCOMPATIBLE_TAG = 'guard_incompatible';
export const GRAPH_CAPTURE_TAG = 'graph-capture';
export const GUARD_TAGS = [GUARD_INCOMPATIBLE_TAG, GRAPH_CAPTURE_TAG] as const;
export type GuardTag = (typeof GUARD_TAGS)[number];

export const GUARD_SKIP_REASONS: Readonly<Record<GuardTag, string>> = {
  [GUARD_INCOMPATIBLE_TAG]: 'guard allocator debug mode does not support this test (tagged guard_incompatible)',
  [GRAPH_CAPTURE_TAG]: 'guard allocator debug mode does not support graph capture',
};

export const GUARD_TAG_DESCRIPTIONS: Readonly<Record<GuardTag, string>> = {
  [GUARD_INCOMPATIBLE_TAG]: 'skipped while mate-guard is on: the test does not work with guarded allocations',
  [GRAPH_CAPTURE_TAG]: 'skipped while mate-guard is on: CUDA graph capture is refused under guarding',
};

export function isGuardTag(tag: string): tag is GuardTag {
  return (GUARD_TAGS as readonly string[]).includes(tag);
}

/** The skip reason for a test with these tags, or undefined if it runs. */
export function guardSkipReason(tags: Iterable<string>, guarding: boolean): string | undefined {
  if (!guarding) return undefined;
  for (const tag of tags) if (isGuardTag(tag)) return GUARD_SKIP_REASONS[tag];
  return undefined;
}
