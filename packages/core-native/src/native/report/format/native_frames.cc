#include "report/format/native_frames.h"

#include <string.h>

namespace mate {

namespace {

const size_t kLongTemplate = 20;
// System-library frames between #0 and the user's first frame shown as they are; more are folded into one line.
const size_t kShownAbove = 3;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// `napi_value__* Napi::details::WrapCallback<...>` -> `Napi::details::WrapCallback<...>`.
// Stops at `operator`, whose name may hold spaces and unbalanced brackets.
std::string WithoutReturnType(const std::string& s) {
  int depth = 0;
  long cut = -1;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (depth == 0 && s.compare(i, 8, "operator") == 0 && (i == 0 || IsSpace(s[i - 1]) || s[i - 1] == ':')) break;
    if (c == '<' || c == '(' || c == '{' || c == '[') depth++;
    else if (c == '>' || c == ')' || c == '}' || c == ']') depth--;
    else if (c == ' ' && depth == 0) cut = static_cast<long>(i);
  }
  return cut >= 0 ? s.substr(cut + 1) : s;
}

// UTF-16 length, as JS counts: the template threshold was set on it.
size_t JsLength(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

std::string CollapseNested(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    bool open = c == '<' || c == '(';
    if (!open || (i >= 8 && s.compare(i - 8, 8, "operator") == 0)) {
      out += c;
      continue;
    }
    char close = c == '<' ? '>' : ')';
    int depth = 0;
    size_t j = i;
    for (; j < s.size(); j++) {
      if (s[j] == '<' || s[j] == '(') depth++;
      else if (s[j] == '>' || s[j] == ')') depth--;
      if (depth == 0) break;
    }
    if (j >= s.size() || s[j] != close) {
      out += c;
      continue;
    }
    std::string inner = s.substr(i + 1, j - i - 1);
    bool collapse = c == '<' ? JsLength(inner) > kLongTemplate : !inner.empty();
    out += c;
    out += collapse ? "\xE2\x80\xA6" : inner;
    out += close;
    i = j;
  }
  return out;
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s->find(from, at)) != std::string::npos; at += to.size()) s->replace(at, from.size(), to);
}

bool IdentStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IdentChar(char c) { return IdentStart(c) || (c >= '0' && c <= '9') || c == '.'; }

std::string SourceText(const JsonValue& loc, const FormatOptions& o) {
  const std::string& file = loc["file"].Str();
  if (file.empty()) return "";
  std::string f = RelativeToCwd(file, o);
  return loc["line"].Truthy() ? f + ":" + NumText(loc["line"]) : f;
}

std::string Where(const JsonValue& frame) {
  const std::string& module = frame["module"].Str();
  if (module.empty()) {
    const JsonValue& pc = frame["pc"];
    std::string at = pc.IsNumber() ? Hex(pc.U64()) : pc.IsString() ? pc.text : Hex(frame["offset"].U64());
    return "(" + at + ", no module)";
  }
  return "(" + Basename(module) + "+" + Hex(frame["offset"].U64()) + ")";
}

Lines FrameLines(const JsonValue& frames, size_t from, size_t to, const FormatOptions& o) {
  Lines lines;
  for (size_t i = from; i < to; i++) {
    const JsonValue& frame = frames.At(i);
    std::string at = Where(frame);
    const JsonValue& inlined = frame["inlined"];
    size_t n = 1 + inlined.items.size();
    for (size_t j = 0; j < n; j++) {
      const JsonValue& loc = j == 0 ? frame : inlined.At(j - 1);
      std::string line = "#" + std::to_string(i) + (j == 0 ? "" : "." + std::to_string(j));
      if (loc["function"].Truthy()) line += " " + ShortFunctionName(loc["function"].Str());
      std::string src = SourceText(loc, o);
      if (!src.empty()) line += " " + src;
      line += " " + at;
      lines.push_back(line);
    }
  }
  return lines;
}

// System libraries the runtimes run on, by file name (`libc.so.6`, `libtorch_cuda.so`).
const char* const kRuntimeLibraries[] = {"libc",      "libm",      "libstdc++", "libgcc_s", "libpthread",
                                         "ld-linux",  "libpython", "libtorch",  "libc10",   "libcuda",
                                         "libcudart", "libnvrtc",  "libcupti"};

}  // namespace

std::string ShortFunctionName(const std::string& name) {
  std::string s = name;
  ReplaceAll(&s, "(anonymous namespace)::", "");
  // llvm-symbolizer writes GCC's clones as ` (.cold)`, c++filt as ` [clone .cold]`.
  if (s.size() > 4 && s.back() == ')') {
    size_t open = s.rfind(" (.");
    if (open != std::string::npos && IdentStart(s[open + 3])) {
      bool ok = true;
      for (size_t i = open + 3; i + 1 < s.size(); i++) ok = ok && IdentChar(s[i]);
      if (ok) s = s.substr(0, open) + " [clone " + s.substr(open + 2, s.size() - open - 3) + "]";
    }
  }
  std::string suffix;
  // Trailing ` [clone ...]` groups.
  while (!s.empty() && s.back() == ']') {
    size_t open = s.rfind(" [clone ");
    if (open == std::string::npos || s.find(']', open) != s.size() - 1) break;
    suffix = s.substr(open) + suffix;
    s.resize(open);
  }
  // Trailing qualifiers: const, volatile, &, &&.
  for (;;) {
    size_t end = s.size();
    size_t sp = end;
    while (sp > 0 && !IsSpace(s[sp - 1])) sp--;
    if (sp == 0 || sp == end) break;
    std::string word = s.substr(sp);
    if (word != "const" && word != "volatile" && word != "&" && word != "&&") break;
    size_t cut = sp;
    while (cut > 0 && IsSpace(s[cut - 1])) cut--;
    s.resize(cut);
  }
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') {
        depth++;
      } else if (s[i] == '(' && --depth == 0) {
        // The `()` of `operator()` is part of the name, not a parameter list.
        if (i > 0 && !(i >= 8 && s.compare(i - 8, 8, "operator") == 0)) s.resize(i);
        break;
      }
    }
  }
  return CollapseNested(WithoutReturnType(s)) + suffix;
}

// `base` (a file name) is the shared library `lib`: libc.so.6, libpython3.11.so.1.0, libstdc++-6.so.
bool IsSharedLibrary(const std::string& base, const char* lib) {
  size_t n = strlen(lib);
  return base.compare(0, n, lib) == 0 && base.size() > n &&
         (base[n] == '.' || base[n] == '-' || base[n] == '_' || (base[n] >= '0' && base[n] <= '9')) &&
         base.find(".so") != std::string::npos;
}

bool IsHostRuntime(const std::string& module, const FormatOptions& o) {
  if (module.empty()) return false;
  // A Python built with a shared interpreter (pyenv, python.org, conda): its
  // eval loop lives in libpython3.X.so, not in the executable.
  return module == o.origin.runtime || Basename(module) == "node" || IsSharedLibrary(Basename(module), "libpython");
}

bool IsRuntimeModule(const std::string& module, const FormatOptions& o) {
  if (IsHostRuntime(module, o)) return true;
  std::string base = Basename(module);
  if (StartsWith(base, "python")) return true;
  for (const char* lib : kRuntimeLibraries)
    if (IsSharedLibrary(base, lib)) return true;
  return false;
}

Lines NativeLines(const std::string& title, const JsonValue& stack, const FormatOptions& o) {
  const JsonValue& frames = stack["frames"];
  size_t n = frames.items.size();
  Lines lines{title + ":"};
  if (n == 0) return lines;
  // The first frame of a module that is not the runtime: #0 and it are shown, the runtime frames between are folded.
  size_t user = 0;
  if (IsRuntimeModule(frames.At(0)["module"].Str(), o)) {
    for (size_t i = 1; i < n; i++) {
      const std::string& m = frames.At(i)["module"].Str();
      if (!m.empty() && !IsRuntimeModule(m, o)) {
        user = i;
        break;
      }
    }
  }
  size_t from = 1;
  for (const std::string& l : FrameLines(frames, 0, 1, o)) lines.push_back("  " + l);
  // A few system-library frames (raise, abort) say what happened: shown; more are folded, and so are the host
  // runtime's own (node's string decoder between a fault and the addon that passed it a bad length).
  bool host_between = false;
  for (size_t i = 1; i < user; i++) host_between = host_between || IsHostRuntime(frames.At(i)["module"].Str(), o);
  if (user > 1 + kShownAbove || (user > 1 && host_between)) {
    std::string modules;
    for (size_t i = 1; i < user; i++) {
      std::string m = frames.At(i)["module"].Truthy() ? Basename(frames.At(i)["module"].Str()) : "no module";
      if ((", " + modules + ", ").find(", " + m + ", ") == std::string::npos)
        modules += (modules.empty() ? "" : ", ") + m;
    }
    const JsonValue& called = frames.At(user - 1)["function"];
    lines.push_back(
        "  \xE2\x80\xA6 " + Plural(user - 1, "frame", "frames") + " in the runtime folded (#1 to #" +
        std::to_string(user - 1) + ", in " + modules +
        (called.Truthy() ? "; #" + std::to_string(user) + " called " + ShortFunctionName(called.Str()) : "") + ")");
    from = user;
  }
  // Down to the first frame in the host runtime (where it called into the user's module).
  size_t last = n;
  for (size_t i = user > 0 ? user + 1 : 1; i < n; i++) {
    if (IsHostRuntime(frames.At(i)["module"].Str(), o)) {
      last = i + 1;
      break;
    }
  }
  if (from < last) {
    for (const std::string& l : FrameLines(frames, from, last, o)) lines.push_back("  " + l);
  }
  if (last < n)
    lines.push_back("  \xE2\x80\xA6 " + std::to_string(n - last) + " more frame" + (n - last == 1 ? "" : "s") +
                    " in the runtime");
  return lines;
}

}  // namespace mate
