#ifndef MATE_REPORT_FORMAT_SUPPRESSION_LINE_H_
#define MATE_REPORT_FORMAT_SUPPRESSION_LINE_H_

#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// The line that suppresses this one report, ready to paste: its kind, the
// first frame of the bad access in the user's code (else the user's line
// that allocated), and its test. "" when the report names nothing to match.
std::string SuppressionLine(const JsonValue& e, const FormatOptions& o);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_SUPPRESSION_LINE_H_
