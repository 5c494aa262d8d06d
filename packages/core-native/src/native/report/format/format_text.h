#ifndef MATE_REPORT_FORMAT_FORMAT_TEXT_H_
#define MATE_REPORT_FORMAT_FORMAT_TEXT_H_

// The one report formatter: an event (as report_event.cc writes it, its
// native frames symbolized and its JS frames resolved by whoever read it)
// rendered as the text a user reads, every line starting with
// `==mate-guard== `. Every line is made safe once here (escape.h) and the
// report is capped (kMaxLineBytes, kMaxTextBytes).
#include <stddef.h>

#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/text_parts.h"

namespace mate {

constexpr size_t kMaxLineBytes = 16u << 10;
constexpr size_t kMaxTextBytes = 1u << 20;

// The report's lines, unprefixed and escaped, capped (the text form, a SARIF message and an annotation are made of
// them).
Lines ReportLines(const JsonValue& event, const FormatOptions& o);
// Each line cut at kMaxLineBytes and the whole at kMaxTextBytes, saying what was cut.
void CapLines(Lines* lines);
// The text report of one event.
std::string FormatText(const JsonValue& event, const FormatOptions& o);
// The same from JSON; a bad event gives one `==mate-guard== ERROR: ...` line naming why (never a crash).
std::string FormatTextJson(const std::string& json, const FormatOptions& o);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_TEXT_H_
