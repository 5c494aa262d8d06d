#ifndef MATE_REPORT_FORMAT_FORMAT_CI_H_
#define MATE_REPORT_FORMAT_FORMAT_CI_H_

// A report as CI formats carry it: its lines without the `==mate-guard== `
// prefix (a SARIF message), and as one GitHub Actions workflow command.
// Where in the repository it points is Node's to resolve (source maps,
// the checkout's root): it comes in as a place.
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/text_parts.h"

namespace mate {

struct SourcePlace {
  std::string path;  // "" when no place is known: an annotation without file=
  std::string line, column;
};

// The report's lines, unprefixed and escaped (the text its process printed,
// when it has one), and for canary damage what its rerun found.
Lines PlainLines(const JsonValue& e, const FormatOptions& o);
// `::error file=...,line=...,col=...,title=...::<the report>` and a newline:
// one command whatever the event holds (an out-of-memory is a notice).
std::string GithubAnnotation(const JsonValue& e, const FormatOptions& o, const SourcePlace& at);
// The annotation of a report file that could not be read.
std::string GithubUnreadable(const std::string& file, const std::string& why);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_CI_H_
