#include "report/format/js_frames.h"

#include <string.h>

#include "report/format/text_parts.h"

namespace mate {

namespace {

// `*` is any text (within the one path segment `s` is).
bool Glob(const std::string& pattern, const std::string& s) {
  size_t star = pattern.find('*');
  if (star == std::string::npos) return s == pattern;
  size_t tail_len = pattern.size() - star - 1;
  return s.size() >= star + tail_len && s.compare(0, star, pattern, 0, star) == 0 &&
         s.compare(s.size() - tail_len, tail_len, pattern, star + 1, tail_len) == 0;
}

bool IsSep(char c) { return c == '/' || c == '\\'; }

// `.../node_modules/<one of packages>/...` (the event's machineryPackages: none in an event written before them).
bool InMachineryPackage(const std::string& loc, const std::vector<std::string>& packages) {
  if (packages.empty()) return false;
  for (size_t at = 0; (at = loc.find("node_modules", at)) != std::string::npos; at += 12) {
    if (at == 0 || !IsSep(loc[at - 1]) || at + 12 >= loc.size() || !IsSep(loc[at + 12])) continue;
    size_t start = at + 13;
    size_t end = start;
    while (end < loc.size() && !IsSep(loc[end])) end++;
    if (end >= loc.size()) continue;
    std::string first = loc.substr(start, end - start);
    std::string second;
    size_t end2 = end + 1;
    while (end2 < loc.size() && !IsSep(loc[end2])) end2++;
    bool scoped_ok = end2 < loc.size();
    if (scoped_ok) second = loc.substr(end + 1, end2 - end - 1);
    for (const std::string& p : packages) {
      size_t slash = p.find('/');
      if (slash == std::string::npos) {
        if (Glob(p, first)) return true;
      } else if (scoped_ok && first == p.substr(0, slash) && Glob(p.substr(slash + 1), second)) {
        return true;
      }
    }
  }
  return false;
}

bool PythonMachinery(const std::string& loc) {
  for (const char* dir : {"site-packages", "dist-packages"}) {
    for (size_t at = 0; (at = loc.find(dir, at)) != std::string::npos; at++) {
      size_t end = at + strlen(dir);
      if (at > 0 && IsSep(loc[at - 1]) && end < loc.size() && IsSep(loc[end])) return true;
    }
  }
  return StartsWith(loc, "<frozen ") || loc == "<string>";
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// file:///a%20b/c.js -> /a b/c.js (as Node's fileURLToPath; a URL it would refuse stays as written).
std::string FileUrlPath(const std::string& url) {
  std::string rest = url.substr(7);
  if (!StartsWith(rest, "/")) return url;
  std::string out;
  for (size_t i = 0; i < rest.size(); i++) {
    if (rest[i] == '%' && i + 2 < rest.size() && HexDigit(rest[i + 1]) >= 0 && HexDigit(rest[i + 2]) >= 0) {
      char c = static_cast<char>(HexDigit(rest[i + 1]) * 16 + HexDigit(rest[i + 2]));
      if (c == '/') return url;  // an encoded separator: Node refuses the URL
      out += c;
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

// Drops a trailing `:line` or `:line:col`.
std::string WithoutPosition(const std::string& loc) {
  std::string s = loc;
  for (int part = 0; part < 2; part++) {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon + 1 == s.size()) break;
    bool digits = true;
    for (size_t i = colon + 1; i < s.size(); i++) digits = digits && s[i] >= '0' && s[i] <= '9';
    if (!digits) break;
    s.resize(colon);
  }
  return s;
}

}  // namespace

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' || s[a] == '\n')) a++;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' || s[b - 1] == '\n')) b--;
  return s.substr(a, b - a);
}

bool JsFrameLocation(const std::string& line, std::string* location) {
  std::string body = Trim(line);
  if (!StartsWith(body, "at ")) return false;
  std::string loc = Trim(body.substr(3));
  if (StartsWith(loc, "async ")) loc = loc.substr(6);
  if (!loc.empty() && loc.back() == ')') {
    int depth = 0;
    for (size_t i = loc.size(); i-- > 0;) {
      if (loc[i] == ')') {
        depth++;
      } else if (loc[i] == '(' && --depth == 0) {
        loc = loc.substr(i + 1, loc.size() - i - 2);
        break;
      }
    }
  }
  // JS's regex strips `:\d+(:\d+)?$` once: a `:line:col` or a `:line`.
  loc = WithoutPosition(loc);
  if (StartsWith(loc, "file://")) loc = FileUrlPath(loc);
  *location = loc;
  return true;
}

bool IsMachineryFrame(const std::string& line, const FormatOptions& o) {
  std::string loc;
  if (!JsFrameLocation(line, &loc)) return false;
  if (StartsWith(loc, "node:")) return true;
  if (loc == "<anonymous>" || loc == "native") return true;
  if (InMachineryPackage(loc, o.origin.machinery_packages) || PythonMachinery(loc)) return true;
  for (const std::string& dir : o.origin.machinery_dirs) {
    if (!dir.empty() && StartsWith(loc, dir.c_str())) return true;
  }
  return false;
}

TrimmedStack TrimJsStack(const std::string& stack, const FormatOptions& o) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= stack.size()) {
    size_t nl = stack.find('\n', start);
    std::string l = stack.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!Trim(l).empty()) lines.push_back(l);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  TrimmedStack out;
  size_t user = 0;
  std::string loc;
  for (const std::string& l : lines) {
    if (IsMachineryFrame(l, o)) continue;
    out.frames.push_back(l);
    if (JsFrameLocation(l, &loc)) user++;
  }
  if (user == 0) {
    // No user frame (the runner itself allocated, or freed as the test's
    // frame ended): the innermost frames say where in the runner; the
    // outer ones (its loop, its command line) say nothing more.
    out.frames.clear();
    size_t kept = 0;
    for (const std::string& l : lines) {
      bool frame = JsFrameLocation(l, &loc);
      if (frame && kept == kRunnerFramesShown) continue;
      kept += frame ? 1 : 0;
      out.frames.push_back(l);
    }
  }
  out.dropped = lines.size() - out.frames.size();
  return out;
}

bool IsPythonStack(const std::string& stack) {
  size_t start = 0;
  std::string loc;
  while (start < stack.size()) {
    size_t nl = stack.find('\n', start);
    std::string l = stack.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (JsFrameLocation(l, &loc)) {
      return (loc.size() > 3 && loc.compare(loc.size() - 3, 3, ".py") == 0) || StartsWith(loc, "<frozen ");
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return false;
}

std::string DroppedFramesLine(size_t dropped) {
  return dropped > 0 ? "\xE2\x80\xA6 " + Plural(dropped, "runner frame", "runner frames") : "";
}

}  // namespace mate
