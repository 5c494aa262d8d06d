#ifndef MATE_REPORT_FORMAT_EVENT_SCHEMA_H_
#define MATE_REPORT_FORMAT_EVENT_SCHEMA_H_

// What a report event must be before it is formatted or counted: the
// fields every reader relies on, with their types. An event that fails is
// unreadable (its reader names the file and the field), never a crash and
// never a reason to lose the other events of the directory.
#include <string>

#include "report/format/json_value.h"

namespace mate {

// "" when `e` is an event this version reads, else why not, naming the
// field: `allocation.size is a string, not a number`.
std::string EventProblem(const JsonValue& e);
// The same from the file's text (its size and nesting bounded): "" or why.
std::string EventTextProblem(const std::string& json);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_EVENT_SCHEMA_H_
