#ifndef MATE_REPORT_EARLIER_REPORTS_H_
#define MATE_REPORT_EARLIER_REPORTS_H_

// Reports a process handed to its test runner (a failed test's message)
// shortly before a guard fault or a death killed it: the runner dies with
// it (Jest in band, Mocha serial), so when no process outlives it, its
// printer shows them before the fatal report.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// The caller-delivered reports of `crash`'s process filed in `dir`, under a
// line saying why they are shown ('' when none, or when its runner showed
// its results before it died); a report marked `shown-<its file>` there (its
// runner showed it with its test's result) is left out.
std::string EarlierReportsText(const std::string& dir, const JsonValue& crash, const FormatOptions& o);

// The file's text, at most `cap` bytes; false when it cannot be read whole or is not a regular file (a FIFO
// or a device is refused, never waited on).
bool ReadSmallFile(const std::string& path, size_t cap, std::string* out);

}  // namespace mate

#endif  // MATE_REPORT_EARLIER_REPORTS_H_
