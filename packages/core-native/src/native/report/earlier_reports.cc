#include "report/earlier_reports.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "platform/regular_file.h"
#include "report/format/earlier_header.h"
#include "report/format/escape.h"
#include "report/format/event_schema.h"
#include "report/format/format_text.h"

namespace mate {

namespace {

// mate-guard-<pid>-<n>.json
bool IsEventFile(const std::string& name) {
  const char prefix[] = "mate-guard-";
  if (name.compare(0, sizeof(prefix) - 1, prefix) != 0 || name.size() < sizeof(prefix) + 7) return false;
  size_t i = sizeof(prefix) - 1;
  for (int part = 0; part < 2; part++) {
    size_t start = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') i++;
    if (i == start || i >= name.size() || name[i] != (part == 0 ? '-' : '.')) return false;
    i++;
  }
  return name.compare(i, std::string::npos, "json") == 0;
}

}  // namespace

bool ReadSmallFile(const std::string& path, size_t cap, std::string* out) {
  // Files of a report folder others may write to: a FIFO or a device there must not hold the printer for ever.
  uint64_t size = 0;
  platform::OwnedFd f{platform::OpenRegularFile(path.c_str(), &size)};
  if (f.fd < 0 || size > cap) return false;
  char buf[65536];
  ssize_t n;
  while ((n = read(f.fd, buf, sizeof(buf))) > 0 && out->size() <= cap) out->append(buf, static_cast<size_t>(n));
  return n == 0 && out->size() <= cap;
}

std::string EarlierReportsText(const std::string& dir, const JsonValue& crash, const FormatOptions& o) {
  const std::string pid = crash["pid"].Str();
  struct stat st;
  // Its runner showed the results before it died (a death at exit): they were shown.
  if (stat((dir + "/results-shown-" + pid).c_str(), &st) == 0) return "";
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      if (IsEventFile(entry->d_name)) names.push_back(entry->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::string reports;
  size_t count = 0;
  for (const std::string& name : names) {
    std::string json;
    JsonValue e;
    std::string error;
    if (!ReadSmallFile(dir + "/" + name, JsonLimits().max_bytes, &json) || !ParseJson(json, &e, &error) ||
        !EventProblem(e).empty())
      continue;
    if (e["pid"].Str() != pid || e["fatal"].Truthy() || e["delivered"].Str() != "caller") continue;
    // Its runner showed it with its test's result (a Jest file that ended before this one): not lost.
    if (stat((dir + "/shown-" + name).c_str(), &st) == 0) continue;
    // A filed text is the folder's word (a folder others can write to): shown, never obeyed by the terminal.
    reports += e["text"].IsString() && !e["text"].text.empty() ? VisibleLines(e["text"].text) : FormatText(e, o);
    count++;
  }
  if (count == 0) return "";
  return EarlierReportsHeader(crash, count, "this process") + reports;
}

}  // namespace mate
