#include "report/format/event_sites.h"

#include <stdlib.h>
#include <string.h>

#include <vector>

#include "report/format/event_origin_fields.h"
#include "report/format/js_frames.h"
#include "report/format/native_frames.h"
#include "report/format/sha256.h"
#include "report/format/text_parts.h"

namespace mate {

namespace {

bool AllDigits(const std::string& s, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// `.so`, `.so.6`, `.so.6.0.33` at the end of `rest` from `at`.
bool SoSuffix(const std::string& rest, size_t at) {
  if (rest.compare(at, 3, ".so") != 0) return false;
  size_t end = at + 3;
  if (end == rest.size()) return true;
  if (rest[end] != '.' || end + 1 == rest.size()) return false;
  for (size_t i = end + 1; i < rest.size(); i++) {
    if (!((rest[i] >= '0' && rest[i] <= '9') || rest[i] == '.')) return false;
  }
  return true;
}

const std::string& Field(const JsonValue& v, const char* key) { return v[key].Str(); }

// A V8-style stack line's parts: function, file, line, column; false for a line that is no frame.
bool ParseJsFrame(const std::string& line, JsonValue* out) {
  std::string file;
  if (!JsFrameLocation(line, &file)) return false;
  std::string body = Trim(Trim(line).substr(3));
  *out = JsonValue::Object();
  // `(?:async )?(.*?) \(.*\)$`: the function is what comes before the first ` (` of a line ending in `)`.
  if (!body.empty() && body.back() == ')') {
    std::string rest = body.compare(0, 6, "async ") == 0 ? body.substr(6) : body;
    size_t open = rest.find(" (");
    if (open != std::string::npos && open > 0) out->Field("function") = JsonValue::String(rest.substr(0, open));
  }
  out->Field("file") = JsonValue::String(file);
  // `:(\d+)(?::(\d+))?\)?$`
  std::string s = !body.empty() && body.back() == ')' ? body.substr(0, body.size() - 1) : body;
  size_t c1 = s.rfind(':');
  if (c1 != std::string::npos && AllDigits(s, c1 + 1, s.size())) {
    size_t c0 = c1 > 0 ? s.rfind(':', c1 - 1) : std::string::npos;
    if (c0 != std::string::npos && AllDigits(s, c0 + 1, c1)) {
      out->Field("line") = JsonValue::Number(atoll(s.substr(c0 + 1, c1 - c0 - 1).c_str()));
      out->Field("column") = JsonValue::Number(atoll(s.substr(c1 + 1).c_str()));
    } else {
      out->Field("line") = JsonValue::Number(atoll(s.substr(c1 + 1).c_str()));
    }
  }
  return true;
}

bool InNodeModules(const std::string& p) {
  return p.compare(0, 13, "node_modules/") == 0 || p.find("/node_modules/") != std::string::npos;
}

void CopyIf(JsonValue* to, const JsonValue& from, const char* key) {
  if (from[key].Truthy()) to->Field(key) = from[key];
}

// Native frames, inlined calls unfolded (innermost first), down to the first frame in the host runtime.
std::vector<JsonValue> NativeSourceFrames(const JsonValue& stack, const SourcePaths& paths, const RunPlace& run,
                                          const FormatOptions& o) {
  std::vector<JsonValue> out;
  const JsonValue& frames = stack["frames"];
  size_t n = frames.items.size();
  for (size_t i = 1; i < n; i++) {
    if (IsHostRuntime(Field(frames.At(i), "module"), o)) {
      n = i + 1;
      break;
    }
  }
  for (size_t i = 0; i < n; i++) {
    const JsonValue& f = frames.At(i);
    size_t count = 1 + f["inlined"].items.size();
    for (size_t j = 0; j < count; j++) {
      const JsonValue& loc = j == 0 ? f : f["inlined"].At(j - 1);
      JsonValue sf = JsonValue::Object();
      CopyIf(&sf, loc, "function");
      CopyIf(&sf, loc, "file");
      CopyIf(&sf, loc, "line");
      CopyIf(&sf, loc, "column");
      CopyIf(&sf, f, "module");
      if (!f["offset"].IsNull()) sf.Field("offset") = f["offset"];
      // Only an absolute file is a place: a relative one is relative to a build directory (libc's `./malloc/malloc.c`).
      const std::string& file = Field(loc, "file");
      std::string repo = !file.empty() && file[0] == '/' ? paths.Relative(file, run) : "";
      if (!repo.empty()) sf.Field("repoPath") = JsonValue::String(repo);
      out.push_back(sf);
    }
  }
  return out;
}

// A JS (or Python, written V8-style) stack's user frames.
std::vector<JsonValue> JsSourceFrames(const JsonValue& stack, const SourcePaths& paths, const RunPlace& run,
                                      const FormatOptions& o) {
  std::vector<JsonValue> out;
  if (!stack.IsString() || stack.text.empty()) return out;
  for (const std::string& line : TrimJsStack(stack.text, o).frames) {
    JsonValue f;
    if (!ParseJsFrame(line, &f)) continue;
    const std::string& file = Field(f, "file");
    std::string repo = !file.empty() && file[0] == '/' ? paths.Relative(file, run) : "";
    if (!repo.empty()) f.Field("repoPath") = JsonValue::String(repo);
    out.push_back(f);
  }
  return out;
}

// The first frame in the repository that is the user's: not a dependency's, a system library's or mate-guard's.
JsonValue SiteOf(const std::vector<JsonValue>& frames) {
  const JsonValue* first = nullptr;
  const JsonValue* pick = nullptr;
  for (const JsonValue& f : frames) {
    if (!f["repoPath"].Truthy() || (f["module"].Truthy() && IsSystemModule(Field(f, "module")))) continue;
    if (first == nullptr) first = &f;
    if (!InNodeModules(Field(f, "repoPath"))) {
      pick = &f;
      break;
    }
  }
  if (pick == nullptr) pick = first;
  if (pick == nullptr) return JsonValue();
  JsonValue site = JsonValue::Object();
  site.Field("path") = (*pick)["repoPath"];
  CopyIf(&site, *pick, "line");
  CopyIf(&site, *pick, "column");
  CopyIf(&site, *pick, "function");
  return site;
}

// The launches a device report suspects: the one that faulted, else those given guarded pointers.
std::vector<const JsonValue*> SuspectLaunches(const JsonValue& e) {
  std::vector<const JsonValue*> faulted, given;
  for (const JsonValue& l : e["launches"]["list"].items) {
    if (l["faulted"].Truthy()) faulted.push_back(&l);
    if (l["argCount"].Num() > 0) given.push_back(&l);
  }
  return faulted.empty() ? given : faulted;
}

std::string AccessLabel(const JsonValue& e) {
  if (e["death"].Truthy()) return "stack";
  const std::string& kind = Field(e, "kind");
  return kind == "double-free" ? "freed again at" : kind == "invalid-free" ? "free called at" : "access";
}

// `[b] x.test.ts > t` -> `x.test.ts`.
std::string TestPathFile(const std::string& name) {
  std::string s = name;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close != std::string::npos && close > 1 && close + 1 < s.size() && s[close + 1] == ' ') s = s.substr(close + 2);
  }
  size_t sep = s.find(" > ");
  return sep == std::string::npos ? s : s.substr(0, sep);
}

std::string Place(const JsonValue& s) {
  if (!s.IsObject()) return "";
  return Field(s, "path") + ":" + (s["line"].IsNull() ? "" : NumText(s["line"])) + " " +
         (s["function"].Truthy() ? ShortFunctionName(Field(s, "function")) : "");
}

}  // namespace

bool IsSystemModule(const std::string& module) {
  std::string base = Basename(module);
  if (base == "node" || base == "mate_guard.node") return true;
  for (const char* lib : {"libc", "libm", "libstdc++", "libgcc_s", "libpthread", "ld-linux"}) {
    size_t n = strlen(lib);
    if (base.compare(0, n, lib) != 0) continue;
    bool any = strcmp(lib, "ld-linux") == 0;  // `ld-linux[^/]*`
    std::string rest = base.substr(n);
    for (size_t at = 0; at + 3 <= rest.size(); at++) {
      if (SoSuffix(rest, at) && (any || at == 0 || rest[0] == '.' || rest[0] == '-')) return true;
    }
  }
  return false;
}

JsonValue EventSites(const JsonValue& e, const SourcePaths& paths, const RunPlace& run, const FormatOptions& options) {
  const FormatOptions o = WithOrigin(options, e);
  JsonValue stacks = JsonValue::Array();
  auto add = [&stacks](const std::string& label, const std::vector<JsonValue>& frames) {
    if (frames.empty()) return;
    JsonValue s = JsonValue::Object();
    s.Field("label") = JsonValue::String(label);
    JsonValue list = JsonValue::Array();
    list.items = frames;
    s.Field("frames") = list;
    stacks.items.push_back(s);
  };
  const JsonValue& a = e["allocation"];
  std::vector<JsonValue> access_frames = NativeSourceFrames(e["accessStack"], paths, run, o);
  add(AccessLabel(e), access_frames);
  const JsonValue& rerun = e["rerun"];
  std::vector<JsonValue> rerun_frames = NativeSourceFrames(rerun["fault"]["accessStack"], paths, run, o);
  add("access, in the rerun in " + (rerun["mode"].IsNull() ? std::string("undefined") : rerun["mode"].Str()) +
          " mode, alignment " + (rerun["alignment"].IsNull() ? std::string("undefined") : NumText(rerun["alignment"])),
      rerun_frames);
  std::vector<std::vector<JsonValue>> launch_frames;
  for (const JsonValue* l : SuspectLaunches(e)) {
    launch_frames.push_back(JsSourceFrames((*l)["site"], paths, run, o));
    add("launch " + NumText((*l)["number"]) + " of " +
            ((*l)["kernel"].Truthy() ? Field(*l, "kernel") : "an unknown kernel"),
        launch_frames.back());
  }
  std::vector<JsonValue> alloc_frames = NativeSourceFrames(a["allocFrames"], paths, run, o);
  for (JsonValue& f : JsSourceFrames(a["allocStack"], paths, run, o)) alloc_frames.push_back(f);
  add("allocated at", alloc_frames);
  std::vector<JsonValue> free_frames = NativeSourceFrames(a["freeFrames"], paths, run, o);
  for (JsonValue& f : JsSourceFrames(a["freeStack"], paths, run, o)) free_frames.push_back(f);
  add(Field(e, "kind") == "double-free" ? "first freed at" : "freed at", free_frames);

  JsonValue allocation = SiteOf(alloc_frames);
  JsonValue free_site = a["freed"].Truthy() ? SiteOf(free_frames) : JsonValue();
  JsonValue own = SiteOf(access_frames);
  JsonValue access = own.IsObject() ? own : SiteOf(rerun_frames);
  bool access_in_rerun = !own.IsObject() && access.IsObject();
  for (const std::vector<JsonValue>& frames : launch_frames) {
    if (!access.IsObject()) access = SiteOf(frames);
  }
  // A free on the wrong stream is the bad call.
  if (Field(e, "kind") == "cross-stream-free" && !access.IsObject()) access = free_site;

  JsonValue test;
  const JsonValue& name = !e["test"].IsNull() ? e["test"] : a["allocTest"];
  std::string file = name.Truthy() ? TestPathFile(name.Str()) : "";
  std::string test_path = file.empty() ? "" : paths.TestFile(file, run);
  if (name.Truthy() && !test_path.empty()) {
    test = JsonValue::Object();
    test.Field("name") = name;
    test.Field("path") = JsonValue::String(test_path);
    // The line where one of its stacks ran in the test's own file.
    const JsonValue* there = nullptr;
    auto look = [&](const std::vector<JsonValue>& frames) {
      for (const JsonValue& f : frames) {
        if (there == nullptr && f["repoPath"].Str() == test_path && f["line"].Truthy()) there = &f;
      }
    };
    look(alloc_frames);
    look(free_frames);
    for (const std::vector<JsonValue>& frames : launch_frames) look(frames);
    if (there != nullptr) {
      CopyIf(&test, *there, "line");
      CopyIf(&test, *there, "column");
      CopyIf(&test, *there, "function");
    }
  }
  JsonValue primary = access;
  if (!primary.IsObject() && test.IsObject()) {
    primary = JsonValue::Object();
    primary.Field("path") = test["path"];
    CopyIf(&primary, test, "line");
    CopyIf(&primary, test, "column");
  }
  if (!primary.IsObject()) primary = allocation.IsObject() ? allocation : free_site;

  JsonValue out = JsonValue::Object();
  if (access.IsObject()) out.Field("access") = access;
  if (access_in_rerun) {
    JsonValue yes;
    yes.kind = JsonValue::kBool;
    yes.boolean = true;
    out.Field("accessInRerun") = yes;
  }
  if (allocation.IsObject()) out.Field("allocation") = allocation;
  if (free_site.IsObject()) out.Field("free") = free_site;
  if (test.IsObject()) out.Field("test") = test;
  if (primary.IsObject()) out.Field("primary") = primary;
  out.Field("stacks") = stacks;
  return out;
}

std::string Fingerprint(const JsonValue& e, const JsonValue& sites) {
  // A rerun's fault is not part of it: a run without the rerun (or one that did not fault) names the same bug.
  const JsonValue& access = sites["accessInRerun"].Truthy() ? JsonValue::Null() : sites["access"];
  std::string parts = Field(e, "kind") + "\n" + Place(access) + "\n" + Place(sites["allocation"]);
  // Canary damage on either side of one allocation is two bugs.
  if (e["damage"].Truthy()) parts += e["damage"]["before"]["bytes"].Truthy() ? "\nbefore" : "\nafter";
  // Nothing in the repository named it: the test does.
  if (!access.IsObject() && !sites["allocation"].IsObject()) {
    const JsonValue& test = sites["test"]["name"].IsNull() ? e["test"] : sites["test"]["name"];
    parts += "\n" + test.Str();
  }
  return Sha256Hex(parts).substr(0, 32);
}

}  // namespace mate
