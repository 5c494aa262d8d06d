#ifndef MATE_REPORT_FORMAT_REPORT_PARTS_H_
#define MATE_REPORT_FORMAT_REPORT_PARTS_H_

// The parts every report shares: stacks (JS, Python and native frames cut
// to the user's own) and an allocation's line and history.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/text_parts.h"

namespace mate {

// `title:` and a JS or Python stack from the user's own frames on (or why there is none).
Lines StackLines(const std::string& title, const JsonValue& stack, const std::string& backend, const FormatOptions& o);
// Where an allocation came from and who freed it.
Lines HistoryLines(const JsonValue& a, bool first_free, const FormatOptions& o);
// `allocation #1: 64 bytes at [start, end), tail mode, alignment 16, backend host (madvise-guard)`.
std::string AllocationLine(const JsonValue& a, const JsonValue& e);
// The guard's free-bypass hint (host faults and deaths share it).
extern const char kFreeBypassHint[];

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_REPORT_PARTS_H_
