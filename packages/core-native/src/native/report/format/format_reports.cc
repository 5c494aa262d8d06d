#include "report/format/format_reports.h"

#include "report/format/event_sites.h"
#include "report/format/format_ci.h"
#include "report/format/format_sarif.h"
#include "report/format/format_text.h"
#include "report/format/source_paths.h"

namespace mate {

namespace {

RunPlace PlaceOf(const JsonValue& run) { return RunPlace{run["cwd"].Str(), run["root"].Str()}; }

// The event with its report text (rendered now when its process left none).
JsonValue WithText(const JsonValue& e, const FormatOptions& o) {
  JsonValue out = e;
  if (!e["text"].IsString()) out.Field("text") = JsonValue::String(FormatText(e, o));
  return out;
}

std::string Sarif(const JsonValue& input, const SourcePaths& paths, const FormatOptions& o) {
  JsonValue log;
  log.kind = JsonValue::kObject;
  log.Field("toolVersion") = input["toolVersion"];
  log.Field("srcroot") = JsonValue::String(FileUri(o.cwd, paths.here + "/"));
  JsonValue unreadable;
  unreadable.kind = JsonValue::kArray;
  for (const JsonValue& u : input["unreadable"].items) {
    JsonValue note;
    note.kind = JsonValue::kObject;
    note.Field("holds") = u["holds"];
    note.Field("why") = u["why"];
    note.Field("uri") = JsonValue::String(FileUri(o.cwd, u["file"].Str()));
    unreadable.items.push_back(note);
  }
  log.Field("unreadable") = unreadable;
  JsonValue results;
  results.kind = JsonValue::kArray;
  for (const JsonValue& item : input["events"].items) {
    JsonValue event = WithText(item["event"], o);
    JsonValue sites = EventSites(event, paths, PlaceOf(item["run"]), o);
    JsonValue r;
    r.kind = JsonValue::kObject;
    r.Field("fingerprint") = JsonValue::String(Fingerprint(event, sites));
    // A frame's file outside the repository, absolute: its file: URI.
    for (JsonValue& stack : sites.Field("stacks").items) {
      for (JsonValue& f : stack.Field("frames").items) {
        const std::string& file = f["file"].Str();
        if (!file.empty() && file[0] == '/' && !f["repoPath"].Truthy())
          f.Field("fileUri") = JsonValue::String(FileUri(o.cwd, file));
      }
    }
    r.Field("event") = event;
    r.Field("sites") = sites;
    results.items.push_back(r);
  }
  log.Field("results") = results;
  return SarifLog(log, o);
}

std::string Github(const JsonValue& input, const SourcePaths& paths, const FormatOptions& o) {
  std::string out;
  // At its access site (JS-only stacks: the test's file); a file that could not be read gets one without a place.
  for (const JsonValue& item : input["events"].items) {
    const JsonValue& e = item["event"];
    if (e["suppressed"].Truthy()) continue;
    JsonValue event = WithText(e, o);
    JsonValue sites = EventSites(event, paths, PlaceOf(item["run"]), o);
    const JsonValue& primary = sites["primary"];
    SourcePlace at;
    if (primary.IsObject())
      at = SourcePlace{primary["path"].Str(), primary["line"].IsNull() ? "" : NumText(primary["line"]),
                       primary["column"].IsNull() ? "" : NumText(primary["column"])};
    out += GithubAnnotation(event, o, at);
  }
  for (const JsonValue& u : input["unreadable"].items) {
    if (u["holds"].Str() == "report") out += GithubUnreadable(u["file"].Str(), u["why"].Str());
  }
  return out;
}

}  // namespace

std::string FormatReports(const JsonValue& input, const std::string& format, const FormatOptions& o) {
  SourcePaths paths{RepoRoot(o.cwd)};
  if (format == "sarif") return Sarif(input, paths, o);
  if (format == "github") return Github(input, paths, o);
  return "";
}

}  // namespace mate
