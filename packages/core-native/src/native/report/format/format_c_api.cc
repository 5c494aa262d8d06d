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
  mate::JsonValue options;
  std::string error;
  bool symbolize =
      options_json != nullptr && mate::ParseJson(options_json, &options, &error) && options["symbolize"].Truthy();
  mate::JsonValue event;
  if (!symbolize || !mate::ParseJson(event_json, &event, &error) || !mate::EventProblem(event).empty()) {
    return mate::Dup(mate::FormatTextJson(event_json, o));
  }
  const char* path = getenv("PATH");
  mate::SymbolizeEvent(&event, path != nullptr ? path : "/usr/bin:/bin", 5000);
  return mate::Dup(mate::FormatText(event, o));
}

char* mate_guard_format_reports(const char* input_json, const char* format, const char* options_json) {
  if (input_json == nullptr || format == nullptr || (strcmp(format, "sarif") != 0 && strcmp(format, "github") != 0))
    return nullptr;
  mate::FormatOptions o = mate::FormatOptionsFromJson(options_json);
  mate::JsonValue options;
  mate::JsonValue input;
  std::string error;
  // Every event of the merged runs at once: the per-event cap does not apply.
  mate::JsonLimits limits;
  limits.max_bytes = size_t{1} << 31;
  limits.max_depth = 64;
  if (!mate::ParseJson(input_json, &input, &error, limits)) return nullptr;
  if (options_json != nullptr && mate::ParseJson(options_json, &options, &error) && options["symbolize"].Truthy()) {
    const char* path = getenv("PATH");
    for (mate::JsonValue& item : input.Field("events").items) {
      mate::JsonValue& event = item.Field("event");
      if (mate::EventProblem(event).empty())
        mate::SymbolizeEvent(&event, path != nullptr ? path : "/usr/bin:/bin", 5000);
    }
  }
  return mate::Dup(mate::FormatReports(input, format, o));
}

char* mate_guard_format_rerun(const char* event_json, const char* options_json) {
  if (event_json == nullptr) return nullptr;
  mate::JsonValue event;
  std::string error;
  if (!mate::ParseJson(event_json, &event, &error)) return nullptr;
  mate::FormatOptions o = mate::FormatOptionsFromJson(options_json);
  mate::JsonValue options;
  if (options_json != nullptr && mate::ParseJson(options_json, &options, &error) && options["symbolize"].Truthy()) {
    // Only a report rendered now needs frames: one filed with its text is shown as filed.
    const char* path = getenv("PATH");
    mate::JsonValue& rerun = event.Field("rerun");
    for (const char* which : {"fault", "death"}) {
      if (!rerun.IsObject() || !rerun[which].IsObject() || rerun[which]["text"].IsString()) continue;
      mate::JsonValue& report = rerun.Field(which);
      if (mate::EventProblem(report).empty())
        mate::SymbolizeEvent(&report, path != nullptr ? path : "/usr/bin:/bin", 5000);
    }
  }
  return mate::Dup(mate::RerunBlock(event, o));
}

void mate_guard_free_report(char* text) { free(text); }

char* mate_guard_event_problem(const char* event_json) {
  return mate::Dup(event_json == nullptr ? std::string("no event") : mate::EventTextProblem(event_json));
}

char* mate_guard_visible_lines(const char* text) { return mate::Dup(mate::VisibleLines(text == nullptr ? "" : text)); }
