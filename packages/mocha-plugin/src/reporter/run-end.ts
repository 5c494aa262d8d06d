// The end of a guarded run in Mocha's main process (plain `mocha`): name
// the test of any worker a guard fault killed (Mocha says nothing and may
// even exit 0), print the summary line, and make the exit code tell the
// truth. mate-mocha does the same from outside instead.
import { flushGuardStats, formatCrashAttribution, RunReportCollector, type ViolationEvent } from '@mate-guard/core';

/** Attribution lines for fatal events; `parallel`: the dead were workers. */
export function describeFatal(events: readonly ViolationEvent[], parallel: boolean): string {
  return events.map((e) => formatCrashAttribution(e, parallel ? 'mocha worker' : 'mocha process')).join('');
}

/**
 * Run at 'exit', after core's own exit check (registered earlier). Exit
 * handlers may still set process.exitCode.
 */
export function finishRunAtExit(collector: RunReportCollector): void {
  process.on('exit', () => {
    flushGuardStats(); // no-op unless the allocator is installed here (serial)
    const fatal = collector.fatal();
    if (fatal.length) process.stderr.write(describeFatal(fatal, true)); // serial: this process would be dead
    const { text, report } = collector.finish();
    process.stderr.write(text);
    if (report.violations.length && !process.exitCode) process.exitCode = 1;
  });
}
