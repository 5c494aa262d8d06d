#include "report/format/rerun_block.h"

#include "report/format/escape.h"
#include "report/format/event_schema.h"
#include "report/format/format_text.h"
#include "report/format/formatters.h"
#include "report/format/text_parts.h"

namespace mate {

namespace {

const char kHead[] = "[mate-guard] rerun ";

// The rerun's fault (or death) report: the text its printer filed, shown safely, else rendered now.
std::string FiledReport(const JsonValue& e, const FormatOptions& o) {
  if (e["text"].IsString()) return VisibleLines(e["text"].Str());
  // Filed without its file (the rerun's folder is gone): nothing is named relative to the original's.
  FormatOptions inner = o;
  inner.event_file.clear();
  std::string problem = EventProblem(e);
  if (!problem.empty()) return "==mate-guard== ERROR: unreadable report event: " + VisibleText(problem) + "\n";
  return FormatText(e, inner);
}

// Filed as `true` only (a rerun that started none of the damage's tests).
bool RanNoTest(const JsonValue& r) { return r["ranNoTest"].kind == JsonValue::kBool && r["ranNoTest"].boolean; }

std::string InTest(const JsonValue& e) { return e["test"].Truthy() ? " in " + e["test"].Str() : ""; }

// A rerun's configuration for a reader: its mode, and the alignment or byte-exact native size it changed.
std::string Label(const JsonValue& e, const JsonValue& r) {
  const std::string& mode = r["mode"].Str();
  if (!r["nativeExactSize"].IsNull())
    return mode + " mode with the native heap's " + NumText(r["nativeExactSize"]) +
           "-byte allocations placed byte-exact";
  if (mode == "tail" && r["alignment"].IsNumber() && r["alignment"].Num() < e["allocation"]["alignment"].Num())
    return mode + " mode with alignment " + NumText(r["alignment"]);
  return mode + " mode";
}

std::string CanaryBlock(const JsonValue& e, const JsonValue& r, const FormatOptions& o) {
  const JsonValue& a = e["allocation"];
  std::string head = kHead + std::string("in ") + Label(e, r) + ": ";
  std::string about = "the canary-corruption of allocation #" + NumText(a["id"]) + " (" + NumText(a["size"]) +
                      " bytes, " + a["mode"].Str() + " mode)" + InTest(e);
  if (r["fault"].Truthy())
    return VisibleText(head + about + " faults at the first bad access:") + "\n" + FiledReport(r["fault"], o);
  const JsonValue& death = r["death"];
  if (death.Truthy()) {
    std::string where = death["test"].Truthy() ? " (in " + death["test"].Str() + ")" : "";
    return VisibleText(head + about + " did not fault: the rerun died of something else first" + where +
                       ", before the bad access, so it proves nothing about it; the death:") +
           "\n" + FiledReport(death, o);
  }
  if (RanNoTest(r))
    return VisibleText(head + "ran no test, so it tells nothing about " + about +
                       ": the runner selected none of its tests (a name that changes from run to run, or an "
                       "argument of the command that excludes it)") +
           "\n";
  return VisibleText(head + about +
                     " did not fault (the damage did not happen again on its own: it may depend on timing or on "
                     "tests that did not rerun)") +
         "\n";
}

std::string KernelBlock(const JsonValue& e, const JsonValue& r, const FormatOptions& o) {
  const JsonValue& ordinal = e["device"]["ordinal"];
  std::string about =
      "the " + e["kind"].Str() + " on device " + (ordinal.IsNull() ? std::string("0") : NumText(ordinal)) + InTest(e);
  std::string head = kHead + std::string("with launch blocking: ");
  if (r["fault"].Truthy()) return VisibleText(head + about + " is this launch's:") + "\n" + FiledReport(r["fault"], o);
  if (RanNoTest(r)) return VisibleText(head + "ran no test, so it tells nothing about " + about) + "\n";
  return VisibleText(head + about +
                     " did not happen again (it may depend on timing, data or tests that did not rerun): rerun with "
                     "--guard-launch-blocking yourself") +
         "\n";
}

}  // namespace

std::string RerunBlock(const JsonValue& e, const FormatOptions& o) {
  const JsonValue& r = e["rerun"];
  if (!r.IsObject() || e["suppressed"].Truthy()) return "";
  // Canary damage the rerun took up: not a fatal one (a fault needs no rerun) and on an allocation.
  if (e["kind"].Str() == "canary-corruption" && !e["fatal"].Truthy() && e["allocation"].Truthy())
    return CanaryBlock(e, r, o);
  return IsKernelException(e) ? KernelBlock(e, r, o) : "";
}

}  // namespace mate
