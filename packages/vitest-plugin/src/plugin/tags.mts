// Test options that tag a test (or a describe block) with a guard tag:
// `test(name, guardIncompatible(), fn)`.
import {
  GRAPH_CAPTURE_TAG,
  GUARD_INCOMPATIBLE_TAG,
  GUARD_TAG_DESCRIPTIONS,
  GUARD_TAGS,
} from '@mate-guard/core/internal';

/** The shape Vitest accepts as test options; extra options are kept. */
export interface GuardTagOptions {
  tags: string[];
  [option: string]: unknown;
}

function withTag(tag: string, options: Readonly<Record<string, unknown>> = {}): GuardTagOptions {
  const given = options.tags;
  const tags = given === undefined ? [] : Array.isArray(given) ? [...(given as string[])] : [String(given)];
  return { ...options, tags: tags.includes(tag) ? tags : [...tags, tag] };
}

/** Skipped while guarding is on: the test can't work with guarded allocations. */
export function guardIncompatible(options?: Readonly<Record<string, unknown>>): GuardTagOptions {
  return withTag(GUARD_INCOMPATIBLE_TAG, options);
}

/** Skipped while guarding is on: graph capture is refused under guarding. */
export function graphCapture(options?: Readonly<Record<string, unknown>>): GuardTagOptions {
  return withTag(GRAPH_CAPTURE_TAG, options);
}

/** Vitest tag definitions for both tags (strictTags fails files with undeclared tags). */
export function guardTagDefinitions(): { name: string; description: string }[] {
  return GUARD_TAGS.map((name) => ({ name, description: GUARD_TAG_DESCRIPTIONS[name] }));
}
