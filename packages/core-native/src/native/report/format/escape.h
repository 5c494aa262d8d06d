#ifndef MATE_REPORT_FORMAT_ESCAPE_H_
#define MATE_REPORT_FORMAT_ESCAPE_H_

// Untrusted strings (test, function, kernel, file names, messages) as each
// format may carry them. Done once, here, for every format.
#include <string>

namespace mate {

// Text reports: every control character shown visibly (`\n`, `\t`,
// `\x1b`, `\u202e` for C1 controls, line separators and bidi overrides),
// bytes that are not UTF-8 as `\xff`, a backslash that could read as
// one of those doubled only where ambiguous is left alone: one line stays
// one line and a terminal is never driven by a report.
std::string VisibleText(const std::string& s);
// A whole report's text as filed in an event (`text`, many lines): as
// VisibleText, but newlines and tabs stay what they are. A report this
// formatter wrote comes back unchanged; a forged one drives no terminal.
std::string VisibleLines(const std::string& s);

// The body of a JSON string (no quotes): `"`, `\`, controls and the line
// separators escaped; bytes that are not UTF-8 become U+FFFD.
std::string JsonEscape(const std::string& s);
std::string JsonQuote(const std::string& s);

// GitHub workflow commands: a message (`%`, CR, LF encoded) and a property
// value (also `:` and `,`), so one annotation is exactly one command.
std::string GithubMessage(const std::string& s);
std::string GithubProperty(const std::string& s);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_ESCAPE_H_
