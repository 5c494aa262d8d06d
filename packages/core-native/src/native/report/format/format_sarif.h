#ifndef MATE_REPORT_FORMAT_FORMAT_SARIF_H_
#define MATE_REPORT_FORMAT_FORMAT_SARIF_H_

// SARIF 2.1.0, the format code-scanning services and editors read: one
// result per violation, its rule the report kind, its location the access
// site in the repository, the allocation, the free and the test as related
// locations, every stack as a SARIF stack, and a fingerprint that stays
// the same for the same bug across runs. Report files that could not be
// read are the run's tool notifications. Where each event points in the
// repository (sites, file URIs, fingerprints) is Node's to resolve: it
// comes in beside each event.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

// `input`: {toolVersion, srcroot (a file: URI), unreadable: [{holds, why, uri}],
// results: [{event, fingerprint, sites: {primary, allocation, free, test,
// stacks: [{label, frames: [{function, file, line, column, module, offset,
// repoPath, fileUri}]}]}}]}. The log as JSON, indented as JSON.stringify(log, null, 2).
std::string SarifLog(const JsonValue& input, const FormatOptions& o);

// JSON.stringify(v, null, 2)'s layout.
std::string WriteJsonPretty(const JsonValue& v);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_SARIF_H_
