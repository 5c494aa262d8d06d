#include "report/format/text_parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

namespace mate {

std::string NumText(const JsonValue& v) {
  if (v.kind == JsonValue::kString) return v.text;
  if (v.kind != JsonValue::kNumber) return "0";
  // Integers as written; JSON from JS never has `1.0` or exponents below 1e21.
  return v.text;
}

std::string Bytes(const JsonValue& n) {
  std::string t = NumText(n);
  return t + (t == "1" ? " byte" : " bytes");
}

std::string Bytes(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

std::string Basename(const std::string& p) {
  size_t end = p.size();
  while (end > 1 && p[end - 1] == '/') end--;
  size_t slash = p.rfind('/', end - 1);
  return slash == std::string::npos ? p.substr(0, end) : p.substr(slash + 1, end - slash - 1);
}

std::string Dirname(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.compare(0, strlen(prefix), prefix) == 0; }

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string RelativeToCwd(const std::string& p, const FormatOptions& o) {
  if (p.empty() || p[0] != '/' || o.cwd.empty()) return p;
  std::string dir = o.cwd;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (p.size() > dir.size() + 1 && p.compare(0, dir.size(), dir) == 0 && (p[dir.size()] == '/' || dir == "/")) {
    std::string rel = p.substr(dir == "/" ? 1 : dir.size() + 1);
    if (!StartsWith(rel, "..")) return rel;
  }
  return p;
}

const char* RelationText(const std::string& relation) {
  if (relation == "past-end") return "past the end of";
  if (relation == "before-start") return "before the start of";
  return "inside";
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace mate
