#ifndef MATE_REPORT_FORMAT_EARLIER_HEADER_H_
#define MATE_REPORT_FORMAT_EARLIER_HEADER_H_

#include <stddef.h>

#include <string>

#include "report/format/json_value.h"

namespace mate {

// The line above the `count` reports `who` (e.g. "this process", "jest
// worker 1234") gave its test runner before `crash` killed it: one owner for
// the crash printer (earlier_reports.cc) and Node (run/earlier.ts).
std::string EarlierReportsHeader(const JsonValue& crash, size_t count, const std::string& who);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_EARLIER_HEADER_H_
