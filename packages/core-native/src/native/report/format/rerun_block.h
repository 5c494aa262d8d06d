#ifndef MATE_REPORT_FORMAT_RERUN_BLOCK_H_
#define MATE_REPORT_FORMAT_RERUN_BLOCK_H_

// What a run's automatic rerun found for a report, as the run's terminal
// prints it under the report: rendered from what the rerun filed in the
// event (`rerun`: {mode, alignment, nativeExactSize?, fault, death?,
// ranNoTest?}), so `mate report`, `python -m mate_guard report` and the
// runner's own terminal show the same words.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// The block under `event`'s report: `[mate-guard] rerun in <label>: ...`
// (canary damage) or `[mate-guard] rerun with launch blocking: ...` (a
// kernel exception), then the fault's or the death's report when the rerun
// found one. "" for an event without a rerun, a suppressed one, or one of
// another kind. The run's settings are not kept: the label names an
// alignment the rerun changed (the only change makes it smaller than the
// allocation's) and a byte-exact native size (filed only when the rerun
// placed one).
std::string RerunBlock(const JsonValue& event, const FormatOptions& o);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_RERUN_BLOCK_H_
