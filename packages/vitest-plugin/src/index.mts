// @mate-guard/vitest: `plugins: [guardAlloc()]` in vitest.config.
import { guardAlloc } from './plugin/plugin.mjs';

export { guardAlloc };
export { guardIncompatible, graphCapture, type GuardTagOptions } from './plugin/tags.mjs';
export type { GuardAllocOptions } from './plugin/options.mjs';
export { GUARD_INCOMPATIBLE_TAG, GRAPH_CAPTURE_TAG } from '@mate-guard/core';
export default guardAlloc;
