#ifndef MATE_CRASH_REPORT_EVENT_H_
#define MATE_CRASH_REPORT_EVENT_H_

#include "crash/violation.h"
#include "crash/writer.h"

namespace mate {

// A violation as one JSON object: the event every report is rendered from
// (src/ts/report/event.ts reads it; the text is added by the TS formatter).
// Async-signal-safe.
void FormatEvent(const Violation& v, Writer* out);

}  // namespace mate

#endif  // MATE_CRASH_REPORT_EVENT_H_
