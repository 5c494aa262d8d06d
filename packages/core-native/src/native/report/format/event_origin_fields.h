#ifndef MATE_REPORT_FORMAT_EVENT_ORIGIN_FIELDS_H_
#define MATE_REPORT_FORMAT_EVENT_ORIGIN_FIELDS_H_

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// `o` with the event's own origin (its "runtime", "machineryDirs" and
// "machineryPackages"); a
// field the event lacks keeps `o`'s (an event inside another, its writer's;
// an event written before events recorded them, what its reader filled in).
FormatOptions WithOrigin(const FormatOptions& o, const JsonValue& e);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_EVENT_ORIGIN_FIELDS_H_
