#include "report/format/earlier_header.h"

#include "report/format/escape.h"
#include "report/format/formatters.h"

namespace mate {

namespace {

std::string DeathCause(const JsonValue& e) {
  const JsonValue& d = e["death"];
  if (e["kind"].Str() == "uncaught-exception" && d["exception"].IsObject()) {
    return "an uncaught C++ exception (" + VisibleText(d["exception"]["type"].Str()) + ")";
  }
  return SignalName(d["signal"]);
}

}  // namespace

std::string EarlierReportsHeader(const JsonValue& crash, size_t count, const std::string& who) {
  std::string what = count == 1 ? "a report" : std::to_string(count) + " reports";
  std::string cause = crash["death"].IsObject() ? DeathCause(crash) : "the guard fault";
  return "[mate-guard] " + VisibleText(who) + " gave its test runner " + what + " before " + cause +
         " killed it; the runner never showed " + (count == 1 ? "it" : "them") + ":\n";
}

}  // namespace mate
