#include "report/format/format_ci.h"

#include "report/format/escape.h"
#include "report/format/format_text.h"
#include "report/format/js_frames.h"

namespace mate {

namespace {

const char kPrefix[] = "==mate-guard== ";

Lines Unprefixed(const std::string& text) {
  Lines lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string l = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (StartsWith(l, kPrefix)) l = l.substr(sizeof(kPrefix) - 1);
    // Text read back from a file is as untrusted as any field: escaped like the formatter's own.
    if (!l.empty()) lines.push_back(VisibleText(l));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::string Command(const char* level, const SourcePlace& at, const std::string& title, const std::string& message) {
  std::string props;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    props += (props.empty() ? "" : ",") + std::string(key) + "=" + GithubProperty(value);
  };
  add("file", at.path);
  add("line", at.line);
  add("col", at.column);
  add("title", title);
  return std::string("::") + level + " " + props + "::" + GithubMessage(message) + "\n";
}

}  // namespace

Lines PlainLines(const JsonValue& e, const FormatOptions& o) {
  Lines lines = e["text"].IsString() && !e["text"].text.empty() ? Unprefixed(e["text"].text) : ReportLines(e, o);
  const JsonValue& r = e["rerun"];
  if (r.IsObject()) {
    std::string how = "the rerun in " + r["mode"].Str() + " mode, alignment " + NumText(r["alignment"]);
    if (r["fault"].IsObject()) {
      Lines fault = ReportLines(r["fault"], o);
      std::string head = fault.empty() ? "" : fault[0];
      if (StartsWith(head, "ERROR: ")) head = head.substr(7);
      std::string at;
      for (size_t i = 0; i + 1 < fault.size(); i++) {
        if (fault[i] != "access:") continue;
        at = Trim(fault[i + 1]);
        if (StartsWith(at, "#0 ")) at = at.substr(3);
        break;
      }
      lines.push_back(how + " faulted: " + head + (at.empty() ? "" : ", at " + at));
    } else {
      lines.push_back(how + " did not fault");
    }
  }
  // Text read back from a file is capped as the formatter's own is.
  CapLines(&lines);
  return lines;
}

std::string GithubAnnotation(const JsonValue& e, const FormatOptions& o, const SourcePlace& at) {
  Lines lines = PlainLines(e, o);
  std::string head = lines.empty() ? e["kind"].Str() : lines[0];
  if (StartsWith(head, "ERROR: ")) head = head.substr(7);
  std::string message;
  for (size_t i = 0; i < lines.size(); i++) message += (i ? "\n" : "") + lines[i];
  // An out-of-memory is the program's failure, not a memory bug: a notice.
  return Command(e["kind"].Str() == "out-of-memory" ? "notice" : "error", at, "mate-guard: " + head, message);
}

std::string GithubUnreadable(const std::string& file, const std::string& why) {
  return Command("error", SourcePlace(), "mate-guard: a report file could not be read",
                 "cannot read report file " + file + ": " + why + "; counted as a violation that could not be read");
}

}  // namespace mate
