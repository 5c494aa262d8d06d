// mate-guard-print <event file> [--with-earlier]: the report printer a
// dying process starts (printer.cc), in Node, Python and any other host
// alike: reads the event the process filed, matches the run's suppressions
// (run.json names the file), renders it with the one formatter, prints it
// on the inherited stderr and writes the text (and the suppression) back
// into the event (`text`, `delivered`, `suppressed`), so a reader later
// shows exactly what was printed. With --with-earlier (no process outlives
// the dying one) it first shows what that process reported earlier to its
// test runner. Exit 0 only when it printed. No Node, no Python: native
// frames are symbolized with llvm-symbolizer or addr2line where one is on
// PATH (else they print as module+offset).
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "platform/private_files.h"
#include "report/earlier_reports.h"
#include "report/format/escape.h"
#include "report/format/event_schema.h"
#include "report/format/format_options.h"
#include "report/format/format_text.h"
#include "report/format/json_value.h"
#include "report/format/suppressions.h"
#include "report/symbolizer.h"

namespace {

constexpr size_t kMaxEventBytes = 16u << 20;  // the reader's cap (json_value.h)
constexpr int kSymbolizeMs = 5000;            // the symbolizers' bound: a dying process waits for its printer
constexpr size_t kMaxSuppressionsBytes = 4u << 20;

bool ReadFile(const char* path, std::string* out) { return mate::ReadSmallFile(path, kMaxEventBytes, out); }

void WriteAll(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t w = write(fd, s.data() + at, s.size() - at);
    if (w <= 0) return;
    at += static_cast<size_t>(w);
  }
}

// The event with its symbolized frames and the printed text in it, written
// beside and renamed over it (readers never see half a file). The report
// folder may be open to others: `.printing` is made new like every report
// file (OpenNewFile: a leftover or planted one, link or file, is removed,
// never followed or truncated); if one reappears first, nothing is recorded.
void RecordPrinted(const char* path, mate::JsonValue* event, const std::string& text) {
  event->Field("text") = mate::JsonValue::String(text);
  event->Field("delivered") = mate::JsonValue::String("stderr");
  std::string tmp = std::string(path) + ".printing";
  int fd = mate::platform::OpenNewFile(tmp.c_str());
  if (fd < 0) return;
  WriteAll(fd, mate::WriteJson(*event) + "\n");
  close(fd);
  if (rename(tmp.c_str(), path) != 0) unlink(tmp.c_str());
}

// A small JSON file of the report directory (run.json, native-heap-<pid>.json); null when absent or bad.
mate::JsonValue ReadJsonFile(const std::string& path) {
  std::string text;
  mate::JsonValue v;
  std::string error;
  if (!ReadFile(path.c_str(), &text) || !mate::ParseJson(text, &v, &error)) return mate::JsonValue();
  return v;
}

std::string DirOf(const std::string& file) {
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

// Deaths: whose native heap the dying process guarded, so a hint never asks for a setting that was on.
void AddNativeHeap(mate::JsonValue* event, const std::string& dir) {
  if (!(*event)["death"].IsObject() || !(*event)["nativeHeap"].IsNull()) return;
  mate::JsonValue state = ReadJsonFile(dir + "/native-heap-" + (*event)["pid"].Str() + ".json");
  if (state["globs"].items.empty()) return;
  mate::JsonValue heap;
  heap.kind = mate::JsonValue::kObject;
  heap.Field("globs") = state["globs"];
  mate::JsonValue& modules = heap.Field("modules");
  modules.kind = mate::JsonValue::kArray;
  for (const mate::JsonValue& m : state["modules"].items)
    modules.items.push_back(mate::JsonValue::String(m["path"].Str()));
  event->Field("nativeHeap") = heap;
}

// The run's suppressions (the file its run.json names, as the run named it), matched against the symbolized
// event. A file that cannot be read now matches nothing: the run checked it at start, and its owner matches again.
void Suppress(mate::JsonValue* event, const mate::JsonValue& run) {
  if (!run["suppressions"].IsString() || run["suppressions"].text.empty() || (*event)["suppressed"].IsObject()) return;
  const std::string& file = run["suppressions"].text;
  std::string text, error;
  std::vector<mate::SuppressionRule> rules;
  if (!mate::ReadSmallFile(file, kMaxSuppressionsBytes, &text) || !mate::ParseSuppressions(text, file, &rules, &error))
    return;
  mate::JsonValue verdict = mate::MatchSuppression(*event, rules);
  if (verdict.IsObject()) event->Field("suppressed") = verdict;
}

}  // namespace

int main(int argc, char** argv) {
  const bool with_earlier = argc == 3 && strcmp(argv[2], "--with-earlier") == 0;
  if (argc != 2 && !with_earlier) {
    fprintf(stderr,
            "usage: mate-guard-print <event file> [--with-earlier]  (started by a dying process: prints its report on "
            "stderr)\n");
    return 2;
  }
  std::string json;
  if (!ReadFile(argv[1], &json) || json.size() > kMaxEventBytes) return 1;
  mate::JsonValue event;
  std::string error;
  if (!mate::ParseJson(json, &event, &error) || !mate::EventProblem(event).empty()) return 1;
  const std::string dir = DirOf(argv[1]);
  mate::JsonValue run = ReadJsonFile(dir + "/run.json");
  const bool run_here = run["tool"].Str() == "mate-guard";
  AddNativeHeap(&event, dir);
  // A symbolizer that exits early must not end the printer.
  signal(SIGPIPE, SIG_IGN);
  const char* search_path = getenv("PATH");
  mate::SymbolizeEvent(&event, search_path != nullptr ? search_path : "/usr/bin:/bin", kSymbolizeMs);
  mate::FormatOptions o;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) o.cwd = cwd;
  o.event_file = argv[1];
  if (run_here) Suppress(&event, run);
  std::string text = mate::FormatText(event, o);
  std::string earlier = with_earlier ? mate::EarlierReportsText(dir, event, o) : "";
  // The dying process owns the run: nothing will print the summary; say where the reports stay.
  std::string owner_gone;
  if (event["fatal"].Truthy() && run_here && run["pid"].Str() == event["pid"].Str()) {
    owner_gone =
        "[mate-guard] the process that owned this run dies with it, so no summary follows; the reports stay in " + dir +
        " (mate report " + dir + " sums them up)\n";
  }
  WriteAll(2, earlier + text + owner_gone);
  // An event printed before (its text filed) is left as it was.
  if (event["text"].IsNull()) RecordPrinted(argv[1], &event, text);
  return 0;
}
