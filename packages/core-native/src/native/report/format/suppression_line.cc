#include "report/format/suppression_line.h"

#include "report/format/escape.h"
#include "report/format/js_frames.h"
#include "report/format/native_frames.h"
#include "report/format/text_parts.h"

namespace mate {

namespace {

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// `/^(libc|libm|libstdc\+\+|libgcc_s|libpthread|ld-linux[^/]*)([.-][^/]*)?\.so(\.[\d.]+)?$|^node$|^mate_guard\.node$/`
// on the file name.
bool IsSystemModule(const std::string& module) {
  std::string base = Basename(module);
  if (base == "node" || base == "mate_guard.node") return true;
  size_t so = base.rfind(".so");
  while (so != std::string::npos) {
    std::string tail = base.substr(so + 3);
    bool version = tail.empty() || (tail[0] == '.' && tail.find_first_not_of("0123456789.") == std::string::npos);
    if (version) break;
    so = so == 0 ? std::string::npos : base.rfind(".so", so - 1);
  }
  if (so == std::string::npos) return false;
  std::string stem = base.substr(0, so);
  if (StartsWith(stem, "ld-linux")) return true;
  for (const char* lib : {"libc", "libm", "libstdc++", "libgcc_s", "libpthread"}) {
    std::string l = lib;
    if (stem == l) return true;
    if (stem.size() > l.size() && stem.compare(0, l.size(), l) == 0 && (stem[l.size()] == '.' || stem[l.size()] == '-'))
      return true;
  }
  return false;
}

std::string Quote(const std::string& v) {
  bool plain = !v.empty();
  for (char c : v)
    plain = plain && !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '"');
  return plain ? v : JsonQuote(v);
}

std::string EscapeGlob(std::string v) {
  for (char& c : v) {
    if (c == '*' || c == '?') c = '?';
  }
  return v;
}

// `fn (file:line:col)` / `file:line:col` -> file and line.
void JsFrameFileLine(const std::string& frame_line, std::string* file, std::string* line) {
  std::string whole = Trim(frame_line);
  if (StartsWith(whole, "at")) {
    size_t i = 2;
    while (i < whole.size() && (whole[i] == ' ' || whole[i] == '\t')) i++;
    if (i > 2) whole = whole.substr(i);
  }
  size_t paren = whole.find(" (");
  std::string rest = paren == std::string::npos ? whole : whole.substr(paren + 2);
  if (!rest.empty() && rest.back() == ')') rest.pop_back();
  std::string nums[2];
  int found = 0;
  while (found < 2) {
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos || !AllDigits(rest.substr(colon + 1))) break;
    nums[found++] = rest.substr(colon + 1);
    rest.resize(colon);
  }
  *file = StartsWith(rest, "file://") ? rest.substr(7) : rest;
  *line = found == 2 ? nums[1] : found == 1 ? nums[0] : "";
}

}  // namespace

std::string SuppressionLine(const JsonValue& e, const FormatOptions& o) {
  std::string fields;
  const JsonValue* frame = nullptr;
  const JsonValue* first = nullptr;
  for (const JsonValue& f : e["accessStack"]["frames"].items) {
    if (!f["function"].Truthy() && !f["module"].Truthy()) continue;
    if (first == nullptr) first = &f;
    if (!f["module"].Truthy() || !IsSystemModule(f["module"].Str())) {
      frame = &f;
      break;
    }
  }
  if (frame == nullptr) frame = first;
  if (frame != nullptr && (*frame)["function"].Truthy()) {
    fields = "function=" + Quote(EscapeGlob(ShortFunctionName((*frame)["function"].Str())));
  } else if (frame != nullptr && (*frame)["module"].Truthy()) {
    fields = "module=" + Quote("*/" + EscapeGlob(Basename((*frame)["module"].Str())));
  } else {
    TrimmedStack t = TrimJsStack(e["allocation"]["allocStack"].Str(), o);
    if (!t.frames.empty()) {
      std::string file, line;
      JsFrameFileLine(t.frames[0], &file, &line);
      if (!file.empty() && !line.empty())
        fields = "allocation=" + Quote("*" + EscapeGlob(Basename(file)) + ":" + line + ":*");
    }
  }
  const JsonValue& test = !e["test"].IsNull() ? e["test"] : e["allocation"]["allocTest"];
  if (test.Truthy()) fields += (fields.empty() ? "" : " ") + std::string("test=") + Quote(EscapeGlob(test.Str()));
  return fields.empty() ? "" : e["kind"].Str() + " " + fields;
}

}  // namespace mate
