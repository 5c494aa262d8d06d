#ifndef MATE_REPORT_FORMAT_FORMAT_C_API_H_
#define MATE_REPORT_FORMAT_FORMAT_C_API_H_

// The one formatter for processes without Node (Python through ctypes, the
// crash printer): C strings in, a malloc'd string out.
#include <string>

#include "report/format/format_options.h"

extern "C" {

// The report of `event_json` in `format` ("text"); `options_json`
// (may be NULL): {"cwd", "file",
// "symbolize": native frames not yet symbolized are, with llvm-symbolizer
// or addr2line from PATH, within 5 s}. A bad
// event gives its one-line error report. NULL for an unknown format or a
// NULL event. Free the result with mate_guard_free_report.
__attribute__((visibility("default"))) char* mate_guard_format_report(const char* event_json, const char* format,
                                                                      const char* options_json);
// `mate report --format sarif|github` over the runs a reader merged: `input_json` as format_reports.h describes,
// `format` "sarif" or "github", `options_json` as above ("symbolize": every event's native frames first). NULL
// for another format or input that is not JSON. Free the result with mate_guard_free_report.
__attribute__((visibility("default"))) char* mate_guard_format_reports(const char* input_json, const char* format,
                                                                       const char* options_json);
// What the run's automatic rerun found for the report of `event_json`, as the run's terminal printed it under the
// report (rerun_block.h); "" when it has no rerun to show. `options_json` as mate_guard_format_report's
// ("symbolize": the rerun's fault or death, when filed without its text). NULL for a NULL or unparsable event.
// Free the result with mate_guard_free_report.
__attribute__((visibility("default"))) char* mate_guard_format_rerun(const char* event_json, const char* options_json);
__attribute__((visibility("default"))) void mate_guard_free_report(char* text);
// "" when the event is one this version reads, else why not (malloc'd; free with mate_guard_free_report).
__attribute__((visibility("default"))) char* mate_guard_event_problem(const char* event_json);
// A report's text from an artifact (an event's `text`) with what a terminal would obey spelled out, newlines and
// tabs kept (escape.h, VisibleLines). Free the result with mate_guard_free_report.
__attribute__((visibility("default"))) char* mate_guard_visible_lines(const char* text);
}

namespace mate {

// Options from their JSON form (unknown or mistyped keys are left at their defaults).
FormatOptions FormatOptionsFromJson(const char* options_json);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_C_API_H_
