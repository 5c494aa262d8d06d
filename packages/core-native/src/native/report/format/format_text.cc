#include "report/format/format_text.h"

#include "report/format/escape.h"
#include "report/format/event_origin_fields.h"
#include "report/format/event_schema.h"
#include "report/format/formatters.h"
#include "report/format/suppression_line.h"

namespace mate {

namespace {

const char kPrefix[] = "==mate-guard== ";

// Last: the suppression that matched it, or the line that would suppress it (ready to paste).
Lines SuppressionLines(const JsonValue& e, const FormatOptions& o) {
  const JsonValue& s = e["suppressed"];
  if (s.Truthy()) {
    std::string outcome =
        e["fatal"].Truthy() ? "counted, not failed; a fault still ends its process" : "counted, not failed";
    return {"suppressed by " + s["file"].Str() + ":" + NumText(s["line"]) + " (" + s["rule"].Str() + "): " + outcome};
  }
  // An out-of-memory is not a bug to suppress.
  if (e["kind"].Str() == "out-of-memory") return {};
  std::string line = SuppressionLine(e, o);
  if (line.empty()) return {};
  return {"suppression: " + line};
}

// A line cut at the cap on a UTF-8 boundary, saying how much was cut.
std::string Capped(const std::string& line) {
  if (line.size() <= kMaxLineBytes) return line;
  size_t cut = kMaxLineBytes;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) cut--;
  return line.substr(0, cut) + "\xE2\x80\xA6 (" + std::to_string(line.size() - cut) + " more bytes cut)";
}

}  // namespace

Lines ReportLines(const JsonValue& e, const FormatOptions& options) {
  const FormatOptions o = WithOrigin(options, e);
  Lines lines;
  const JsonValue& a = e["allocation"];
  if (e["death"].Truthy()) lines = FormatDeath(e, e["death"], o);
  else if (IsKernelException(e)) lines = FormatKernelException(e, o);
  else if (e["kind"].Str() == "out-of-memory" && e["memory"].Truthy()) lines = FormatOutOfMemory(e, e["memory"]);
  else if (e["kind"].Str() == "cross-stream-free" && a.Truthy() && e["streams"].Truthy())
    lines = FormatCrossStreamFree(e, a, o);
  else if (IsBadFree(e) || !a.Truthy()) lines = FormatBadFree(e, o);
  else lines = FormatAccess(e, a, o);
  Append(&lines, SuppressionLines(e, o));
  for (std::string& l : lines) l = VisibleText(l);
  CapLines(&lines);
  return lines;
}

void CapLines(Lines* lines) {
  size_t total = 0;
  for (size_t i = 0; i < lines->size(); i++) {
    (*lines)[i] = Capped((*lines)[i]);
    total += (*lines)[i].size() + sizeof(kPrefix);
    if (total > kMaxTextBytes) {
      size_t cut = lines->size() - i;
      lines->resize(i);
      lines->push_back("\xE2\x80\xA6 " + std::to_string(cut) + " more lines cut (the report's cap is " +
                       std::to_string(kMaxTextBytes >> 10) + " KiB)");
      return;
    }
  }
}

std::string FormatText(const JsonValue& e, const FormatOptions& o) {
  std::string out;
  for (const std::string& l : ReportLines(e, o)) out += kPrefix + l + "\n";
  return out;
}

std::string FormatTextJson(const std::string& json, const FormatOptions& o) {
  JsonValue e;
  std::string error;
  if (!ParseJson(json, &e, &error))
    return std::string(kPrefix) + "ERROR: unreadable report event: not JSON (" + VisibleText(error) + ")\n";
  std::string problem = EventProblem(e);
  if (!problem.empty()) return std::string(kPrefix) + "ERROR: unreadable report event: " + VisibleText(problem) + "\n";
  return FormatText(e, o);
}

}  // namespace mate
