#include "report/format/format_c_api.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/format/escape.h"
#include "report/format/event_schema.h"
#include "report/format/format_reports.h"
#include "report/format/format_text.h"
#include "report/format/json_value.h"
#include "report/format/rerun_block.h"
#include "report/symbolizer.h"

namespace mate {

namespace {

char* Dup(const std::string& s) {
  char* out = static_cast<char*>(malloc(s.size() + 1));
  if (out != nullptr) memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

// The caller's options ask for frames symbolized here (`"symbolize": true`: a
// host with no symbolizer of its own, the Python package).
bool WantsSymbols(const char* options_json) {
  JsonValue options;
  std::string error;
  return options_json != nullptr && ParseJson(options_json, &options, &error) && options["symbolize"].Truthy();
}

// An event's frames symbolized in place (the tools found on PATH); an
// event that cannot be read is left for the formatter to say so.
void SymbolizeReadable(JsonValue* event) {
  if (!EventProblem(*event).empty()) return;
  const char* path = getenv("PATH");
  SymbolizeEvent(event, path != nullptr ? path : "/usr/bin:/bin", 5000);
}

}  // namespace

FormatOptions FormatOptionsFromJson(const char* options_json) {
  FormatOptions o;
  JsonValue v;
  std::string error;
  if (options_json != nullptr && ParseJson(options_json, &v, &error) && v.IsObject()) {
    o.cwd = v["cwd"].Str();
    o.event_file = v["file"].Str();
  }
  if (o.cwd.empty()) {
    char buf[4096];
    if (getcwd(buf, sizeof(buf)) != nullptr) o.cwd = buf;
  }
  return o;
}

}  // namespace mate

char* mate_guard_format_report(const char* event_json, const char* format, const char* options_json) {
  if (event_json == nullptr || format == nullptr || strcmp(format, "text") != 0) return nullptr;
  mate::FormatOptions o = mate::FormatOptionsFromJson(options_json);
  mate::JsonValue event;
  std::string error;
  if (!mate::WantsSymbols(options_json) || !mate::ParseJson(event_json, &event, &error) ||
      !mate::EventProblem(event).empty()) {
    return mate::Dup(mate::FormatTextJson(event_json, o));
  }
  mate::SymbolizeReadable(&event);
  return mate::Dup(mate::FormatText(event, o));
}

char* mate_guard_format_reports(const char* input_json, const char* format, const char* options_json) {
  if (input_json == nullptr || format == nullptr || (strcmp(format, "sarif") != 0 && strcmp(format, "github") != 0))
    return nullptr;
  mate::FormatOptions o = mate::FormatOptionsFromJson(options_json);
  mate::JsonValue input;
  std::string error;
  // Every event of the merged runs at once: the per-event cap does not apply.
  mate::JsonLimits limits;
  limits.max_bytes = size_t{1} << 31;
  limits.max_depth = 64;
  if (!mate::ParseJson(input_json, &input, &error, limits)) return nullptr;
  if (mate::WantsSymbols(options_json))
    for (mate::JsonValue& item : input.Field("events").items) mate::SymbolizeReadable(&item.Field("event"));
  return mate::Dup(mate::FormatReports(input, format, o));
}

char* mate_guard_format_rerun(const char* event_json, const char* options_json) {
  if (event_json == nullptr) return nullptr;
  mate::JsonValue event;
  std::string error;
  if (!mate::ParseJson(event_json, &event, &error)) return nullptr;
  mate::FormatOptions o = mate::FormatOptionsFromJson(options_json);
  if (mate::WantsSymbols(options_json)) {
    // Only a report rendered now needs frames: one filed with its text is shown as filed.
    mate::JsonValue& rerun = event.Field("rerun");
    for (const char* which : {"fault", "death"})
      if (rerun.IsObject() && rerun[which].IsObject() && !rerun[which]["text"].IsString())
        mate::SymbolizeReadable(&rerun.Field(which));
  }
  return mate::Dup(mate::RerunBlock(event, o));
}

void mate_guard_free_report(char* text) { free(text); }

char* mate_guard_event_problem(const char* event_json) {
  return mate::Dup(event_json == nullptr ? std::string("no event") : mate::EventTextProblem(event_json));
}

char* mate_guard_visible_lines(const char* text) { return mate::Dup(mate::VisibleLines(text == nullptr ? "" : text)); }
