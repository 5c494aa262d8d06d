#ifndef MATE_REPORT_FORMAT_FORMAT_REPORTS_H_
#define MATE_REPORT_FORMAT_FORMAT_REPORTS_H_

// The CI formats of `mate report` and `python -m mate_guard report`, one
// copy for both readers: the SARIF log and the GitHub annotations of the
// events of the runs they merged. The reader finds the files, reads them
// and symbolizes their native frames; sites, fingerprints and file URIs
// are resolved here, against the reader's repository.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// `input`: {toolVersion, events: [{event, run: {cwd, root} | null}], unreadable: [{holds: "report" | "counters",
// why, file}]}; the repository is the one o.cwd is in. `format`: "sarif" (the log, as JSON.stringify(log, null, 2))
// or "github" (one workflow command per violation not suppressed, then one per unreadable report file). An event
// without its text is rendered first. "" for another format.
std::string FormatReports(const JsonValue& input, const std::string& format, const FormatOptions& o);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_REPORTS_H_
