#include "report/format/report_parts.h"

#include "report/format/js_frames.h"
#include "report/format/native_frames.h"

namespace mate {

const char kFreeBypassHint[] =
    "glibc was given a pointer it never allocated: free and realloc guarded memory through the module's own import "
    "(not a "
    "stored pointer to libc's function), or leave that module out of --guard-native";

Lines StackLines(const std::string& title, const JsonValue& stack, const std::string& backend, const FormatOptions& o) {
  if (!stack.Truthy()) {
    return {title + " (no stack captured: " +
            (backend == "cuda" ? "no JS or Python code was running on that thread, or captureStacks is off"
                               : "captureStacks is off") +
            ")"};
  }
  TrimmedStack t = TrimJsStack(stack.Str(), o);
  Lines lines{title + ":"};
  for (const std::string& l : t.frames) {
    size_t i = 0;
    while (i < l.size() && l[i] == ' ') i++;
    lines.push_back("  " + l.substr(i));
  }
  if (t.dropped) lines.push_back("  " + DroppedFramesLine(t.dropped));
  return lines;
}

namespace {

// Native frames (the native heap), then the JS or Python call into native code when there was one; else that stack.
Lines SiteLines(const std::string& title, const JsonValue& frames, const JsonValue& stack, const std::string& backend,
                const FormatOptions& o) {
  if (frames["frames"].items.empty()) return StackLines(title, stack, backend, o);
  Lines lines = NativeLines(title, frames, o);
  if (stack.Truthy())
    Append(&lines,
           StackLines(IsPythonStack(stack.Str()) ? "called from Python at" : "called from JS at", stack, "", o));
  return lines;
}

}  // namespace

Lines HistoryLines(const JsonValue& a, bool first_free, const FormatOptions& o) {
  Lines lines;
  const std::string& backend = a["backend"].Str();
  if (a["allocTest"].Truthy()) lines.push_back("allocated during test: " + a["allocTest"].Str());
  Append(&lines, SiteLines("allocated at", a["allocFrames"], a["allocStack"], backend, o));
  if (a["freed"].Truthy()) {
    if (a["freeTest"].Truthy()) lines.push_back("freed during test: " + a["freeTest"].Str());
    if (a["freedBy"].Str() == "gc") {
      lines.push_back("freed by the garbage collector: no JS reference to the buffer was left");
    } else {
      Append(&lines,
             SiteLines(first_free ? "first freed at" : "freed at", a["freeFrames"], a["freeStack"], backend, o));
    }
  }
  return lines;
}

std::string AllocationLine(const JsonValue& a, const JsonValue& e) {
  std::string device = e["device"].IsObject() ? " on device " + NumText(e["device"]["ordinal"]) : "";
  return "allocation #" + NumText(a["id"]) + ": " + Bytes(a["size"]) + " at [" + a["start"].Str() + ", " +
         a["end"].Str() + "), " + a["mode"].Str() + " mode, alignment " + NumText(a["alignment"]) + ", backend " +
         a["backend"].Str() + device + " (" + a["guardMethod"].Str() + ")";
}

}  // namespace mate
