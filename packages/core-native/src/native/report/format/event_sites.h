#ifndef MATE_REPORT_FORMAT_EVENT_SITES_H_
#define MATE_REPORT_FORMAT_EVENT_SITES_H_

// Where a violation happened, in source terms, for the formats CI tools
// read (SARIF, workflow annotations): its stacks as source frames (native
// ones as symbolized, inlined calls unfolded, down to the runtime; JS ones
// cut to the user's frames), and the sites those tools point at: the bad
// access, the allocation, the free, the test. Its fingerprint: the same
// bug gets the same one in every run, on every machine.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/source_paths.h"

namespace mate {

// {access?, accessInRerun?, allocation?, free?, test? {name, path, line?...}, primary?, stacks: [{label, frames:
// [{function, file, line, column, module, offset, repoPath, fileUri}]}]}; a site is {path, line?, column?, function?}.
// The event's native frames are read as symbolized (the host symbolizes first).
JsonValue EventSites(const JsonValue& e, const SourcePaths& paths, const RunPlace& run, const FormatOptions& o);

// 32 hex digits of SHA-256 over the kind, the access site (file:line and function, relative to the repository)
// and the allocation site; never what changes from run to run (pid, address, time, allocation number).
std::string Fingerprint(const JsonValue& e, const JsonValue& sites);

// A system library's, the runtime's or mate-guard's own module: never where a report points.
bool IsSystemModule(const std::string& module);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_EVENT_SITES_H_
