// The one report formatter: renders an event as the text a user reads.
// Every line starts with `==mate-guard== `.
import { isKernelException, type ViolationEvent } from './event';
import { isNotice } from './notices';
import { formatOutOfMemory } from './out-of-memory';
import { suppressionLine } from './suppressions';
import { isBadFree, formatBadFree, formatAccess } from './format-host';
import { formatKernelException, formatCrossStreamFree } from './format-cuda';
import { formatDeath } from './format-death';

export { framesToRuntime } from './format-shared';
export { signalName } from './format-death';

const REPORT_PREFIX = '==mate-guard== ';

/** Last: the suppression that matched it, or the line that would suppress it (ready to paste). */
function suppressionLines(e: ViolationEvent): string[] {
  const s = e.suppressed;
  if (s) {
    const outcome = e.fatal ? 'counted, not failed; a fault still ends its process' : 'counted, not failed';
    return [`suppressed by ${s.file}:${s.line} (${s.rule}): ${outcome}`];
  }
  // An out-of-memory is not a bug to suppress.
  const line = isNotice(e) ? undefined : suppressionLine(e);
  return line ? [`suppression: ${line}`] : [];
}

/** The report of one event. */
export function formatReport(e: ViolationEvent): string {
  let lines: string[];
  if (e.death) lines = formatDeath(e, e.death);
  else if (isKernelException(e)) lines = formatKernelException(e);
  else if (e.kind === 'out-of-memory' && e.memory) lines = formatOutOfMemory(e, e.memory);
  else if (e.kind === 'cross-stream-free' && e.allocation && e.streams) lines = formatCrossStreamFree(e, e.allocation);
  else lines = isBadFree(e) || !e.allocation ? formatBadFree(e) : formatAccess(e, e.allocation);
  lines.push(...suppressionLines(e));
  return lines.map((l) => REPORT_PREFIX + l + '\n').join('');
}
