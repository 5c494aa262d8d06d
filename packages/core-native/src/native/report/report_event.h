#ifndef MATE_REPORT_REPORT_EVENT_H_
#define MATE_REPORT_REPORT_EVENT_H_

#include "report/violation.h"
#include "report/writer.h"

namespace mate {

// A violation as one JSON object: the event every report is rendered from
// (src/ts/report/event.ts reads it; the text is added by the TS formatter).
// Async-signal-safe.
void FormatEvent(const Violation& v, Writer* out);

}  // namespace mate

#endif  // MATE_REPORT_REPORT_EVENT_H_
