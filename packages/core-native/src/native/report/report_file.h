#ifndef MATE_REPORT_REPORT_FILE_H_
#define MATE_REPORT_REPORT_FILE_H_

#include <cstddef>

namespace mate {

// Where events go; set once at install (copied into a static buffer).
void SetReportDir(const char* dir);
// The directory set, "" before.
const char* ReportDir();

// Writes `json` to <dir>/mate-guard-<pid>-<n>.json (whole or not at all:
// written beside and renamed) and puts its path into `path` (capacity
// `cap`). Async-signal-safe.
bool WriteReportFile(const char* json, size_t len, char* path, size_t cap);

// Replaces the contents of a file WriteReportFile wrote (whole or not at
// all). Async-signal-safe.
bool RewriteReportFile(const char* path, const char* json, size_t len);

}  // namespace mate

#endif  // MATE_REPORT_REPORT_FILE_H_
