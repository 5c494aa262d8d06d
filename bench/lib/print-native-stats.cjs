'use strict';
// Preloaded by bench/native-suite.mjs: each guarded process reports its
// native-heap counters on stderr at exit.
process.on('exit', () => {
  let core;
  try {
    core = require(process.env.MATE_STATS_CORE || '../../packages/core-native');
  } catch {
    return;
  }
  if (!core.isGuardAllocatorActive()) return;
  const s = core.stats();
  process.stderr.write(
    `[native-stats] ${JSON.stringify({ native: s.nativeAllocations, unguarded: s.nativeUnguarded, foreign: s.nativeForeignFrees, bad: s.nativeBadFrees, peakLive: s.peakLive, keptMarkers: s.nativeKeptMarkerCloses, keptMprotect: s.nativeKeptMprotectCloses })}\n`,
  );
});
