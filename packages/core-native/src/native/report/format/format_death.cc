// Deaths that are no guard fault: a deadly signal (SIGABRT, SIGSEGV outside
// guarded memory, ...) or an uncaught C++ exception.
#include <string.h>

#include "report/format/escape.h"
#include "report/format/formatters.h"
#include "report/format/native_frames.h"
#include "report/format/report_parts.h"

namespace mate {

namespace {

// Linux's numbering (x86-64 and arm64), as the dying process's.
const char* const kSignalNames[] = {nullptr,    "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",  "SIGTRAP",   "SIGABRT",
                                    "SIGBUS",   "SIGFPE",  "SIGKILL",   "SIGUSR1", "SIGSEGV", "SIGUSR2",   "SIGPIPE",
                                    "SIGALRM",  "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP",   "SIGTSTP",
                                    "SIGTTIN",  "SIGTTOU", "SIGURG",    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF",
                                    "SIGWINCH", "SIGIO",   "SIGPWR",    "SIGSYS"};

// What si_code says, per signal (Linux).
const char* CodeText(const std::string& name, int code) {
  static const char* const segv[] = {"address not mapped", "no permission for the access"};
  static const char* const bus[] = {"misaligned address", "nonexistent physical address",
                                    "hardware error on a mapped object (a file truncated under a mapping?)"};
  static const char* const ill[] = {"illegal opcode",    "illegal operand",     "illegal addressing mode",
                                    "illegal trap",      "privileged opcode",   "privileged register",
                                    "coprocessor error", "internal stack error"};
  static const char* const fpe[] = {"integer divide by zero",           "integer overflow",
                                    "floating-point divide by zero",    "floating-point overflow",
                                    "floating-point underflow",         "floating-point inexact result",
                                    "invalid floating-point operation", "subscript out of range"};
  static const char* const trap[] = {"breakpoint", "trace trap"};
  struct Table {
    const char* name;
    const char* const* texts;
    int count;
  };
  static const Table tables[] = {
      {"SIGSEGV", segv, 2}, {"SIGBUS", bus, 3}, {"SIGILL", ill, 8}, {"SIGFPE", fpe, 8}, {"SIGTRAP", trap, 2}};
  for (const Table& t : tables) {
    if (name == t.name && code >= 1 && code <= t.count) return t.texts[code - 1];
  }
  return nullptr;
}

const int kSiKernel = 0x80;

bool SegvOrBus(const std::string& name) { return name == "SIGSEGV" || name == "SIGBUS"; }

// How the signal came: the kernel's reason, or who sent it.
std::string SignalCause(const JsonValue& d, const JsonValue& pid) {
  std::string name = SignalName(d["signal"]);
  int code = static_cast<int>(d["code"].Num());
  const JsonValue& m = d["misaligned"];
  if (code > 0 && code != kSiKernel) {
    const char* text = CodeText(name, code);
    return text != nullptr ? text : "si_code " + NumText(d["code"]);
  }
  if (code == kSiKernel && m.Truthy()) {
    uint64_t alignment = m["alignment"].U64();
    uint64_t off = alignment ? m["address"].U64() % alignment : 0;
    return "a general-protection fault: " + m["instruction"].Str() + " needs " + NumText(m["alignment"]) +
           "-byte aligned memory and was given " + m["address"].Str() + ", " + Bytes(off) + " past a " +
           NumText(m["alignment"]) + "-byte boundary";
  }
  if (code == kSiKernel) {
    return SegvOrBus(name) ? "a general-protection fault: a non-canonical pointer, an aligned SSE/AVX access of a "
                             "misaligned address, "
                             "or a privileged instruction; the kernel gives no address"
                           : "raised by the kernel";
  }
  if (!d["sender"].IsNull() && NumText(d["sender"]) == NumText(pid)) {
    return name == "SIGABRT" ? "abort(): a failed assert, a library's fatal check, or abort() called directly"
                             : "raised by the process itself";
  }
  return "sent by process " + (d["sender"].IsNull() ? std::string("unknown") : NumText(d["sender"])) +
         (code == 0 ? " (kill)" : "");
}

std::string DeathHeadline(const JsonValue& e, const JsonValue& d) {
  const JsonValue& ex = d["exception"];
  if (e["kind"].Str() == "uncaught-exception" && ex.Truthy()) {
    std::string what = ex["what"].IsNull() ? "" : ": " + JsonQuote(ex["what"].Str());
    return "ERROR: uncaught-exception: " + ex["type"].Str() + what + " (no frame caught it: std::terminate, then " +
           SignalName(d["signal"]) + ")";
  }
  std::string name = SignalName(d["signal"]);
  int code = static_cast<int>(d["code"].Num());
  std::string access = d["access"].Truthy() && d["access"].Str() != "ACCESS" ? " on " + d["access"].Str() : "";
  // SI_KERNEL faults carry no address (si_addr is 0).
  std::string at = d["address"].Truthy() && code != kSiKernel ? access + " at " + d["address"].Str() : "";
  std::string outside = SegvOrBus(name) && code > 0 && code != kSiKernel ? ", outside guarded memory" : "";
  return "ERROR: deadly-signal: " + name + at + " (" + SignalCause(d, e["pid"]) + ")" + outside + ": the process dies";
}

// What mate-guard knows about it, beyond the signal.
Lines DeathFacts(const JsonValue& e, const JsonValue& d, const FormatOptions& o) {
  Lines lines;
  if (d["abortMessage"].Truthy()) {
    std::string msg = d["abortMessage"].Str();
    size_t a = msg.find_first_not_of(" \t\r\n"), b = msg.find_last_not_of(" \t\r\n");
    lines.push_back("glibc: " + (a == std::string::npos ? std::string() : msg.substr(a, b - a + 1)));
  }
  const JsonValue& f = d["guardedFree"];
  if (f.Truthy() && e["allocation"].Truthy()) {
    const JsonValue& frames = e["accessStack"]["frames"];
    size_t k = static_cast<size_t>(f["frame"].Num());
    const JsonValue* caller = nullptr;
    for (size_t i = k + 1; i < frames.items.size(); i++) {
      if (frames.At(i)["module"].Truthy()) {
        caller = &frames.At(i);
        break;
      }
    }
    if (caller == nullptr) caller = &frames.At(k + 1);
    std::string module =
        (*caller)["module"].Truthy() ? RelativeToCwd((*caller)["module"].Str(), o) : "an unknown module";
    const std::string& fn = f["function"].Str();
    lines.push_back("mate-guard: " + fn + "() of a pointer mate-guard allocated (" + f["pointer"].Str() +
                    ", allocation #" + NumText(e["allocation"]["id"]) +
                    "), called from a module or by a path that is not redirected: " + module + " (frame #" +
                    std::to_string(k + 1) + " called " + fn +
                    " directly, not through an import the free router rewrote: a stored pointer to libc's " + fn +
                    ", or code linked statically)");
  }
  return lines;
}

// A misaligned SSE/AVX access: whose memory it was and what to do.
std::string MisalignedHint(const JsonValue& e, const JsonValue& m) {
  const JsonValue& a = e["allocation"];
  std::string need = NumText(m["alignment"]);
  if (a.Truthy() && a["alignment"].Num() < m["alignment"].Num()) {
    std::string why = a["backend"].Str() == "native-heap"
                          ? "the native heap placed its " + NumText(a["size"]) +
                                "-byte allocations byte-exact (--guard-native-exact-size=" + NumText(a["size"]) +
                                ", as a rerun after gap damage does), which code that needs them " + need +
                                "-byte aligned cannot run with: leave that setting off for a size such code allocates"
                          : "mate-guard placed it with alignment " + NumText(a["alignment"]) +
                                " (--guard-alignment), which code that needs " + need +
                                "-byte alignment cannot run with: raise the alignment to " + need;
    return m["instruction"].Str() + " was given allocation #" + NumText(a["id"]) + ", which mate-guard placed " +
           NumText(a["alignment"]) + "-byte aligned: " + why +
           "; this death is the placement's, not a bug of the program";
  }
  std::string whose = a.Truthy() ? "allocation #" + NumText(a["id"]) + " (mate-guard's, " + NumText(a["alignment"]) +
                                       "-byte aligned; the address is inside it)"
                                 : "memory mate-guard did not allocate";
  return "the code at the top of the stack assumed " + need + "-byte alignment of " + whose +
         ": a pointer offset from an aligned start, or memory from an allocator that promises less; the stack shows "
         "where";
}

bool HeapWords(const std::string& msg) {
  std::string lower = msg;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  for (const char* w : {"free", "malloc", "realloc", "chunk", "corrupted", "tcache", "heap"}) {
    if (lower.find(w) != std::string::npos) return true;
  }
  return false;
}

std::string DeathHint(const JsonValue& e, const JsonValue& d, const FormatOptions& o) {
  if (e["kind"].Str() == "uncaught-exception") {
    return "a C++ exception left native code uncaught (thrown through Node's frames, from a noexcept function or on a "
           "thread): catch it "
           "where it is thrown and turn it into a JS error (Napi::Error, napi_throw_error)";
  }
  if (d["guardedFree"].Truthy()) return kFreeBypassHint;
  if (d["misaligned"].Truthy()) return MisalignedHint(e, d["misaligned"]);
  std::string name = SignalName(d["signal"]);
  int code = static_cast<int>(d["code"].Num());
  const JsonValue& heap = e["nativeHeap"];
  std::string guarding;
  if (heap.Truthy()) {
    std::string globs;
    for (const JsonValue& g : heap["globs"].items) globs += (globs.empty() ? "" : ", ") + JsonQuote(g.Str());
    guarding = " (its native heap guard covers " + globs + ")";
  }
  if (name == "SIGABRT" && d["abortMessage"].Truthy() && HeapWords(d["abortMessage"].Str())) {
    return heap.Truthy() ? "glibc found its heap damaged: memory mate-guard does not guard was overrun or freed twice" +
                               guarding +
                               ": another module's memory, or an allocation sampled out; add the module that allocates "
                               "it to --guard-native, at "
                               "sample rate 1, so the first bad access faults"
                         : "glibc found its heap damaged: memory mate-guard does not guard (another module's, or "
                           "sampled out) was overrun or freed "
                           "twice; add the module that allocates it to --guard-native (sample rate 1) so the first bad "
                           "access faults";
  }
  if (SegvOrBus(name) && code > 0 && code != kSiKernel) {
    std::string top;
    for (const JsonValue& f : e["accessStack"]["frames"].items) {
      if (f["module"].Truthy()) {
        top = f["module"].Str();
        break;
      }
    }
    bool guarded = false;
    for (const JsonValue& m : heap["modules"].items) guarded = guarded || (!top.empty() && m.Str() == top);
    if (heap.Truthy() && guarded) {
      return "the access was outside guarded memory, and " + RelativeToCwd(top, o) +
             "'s heap is guarded already: the pointer is none of its guarded allocations (a wild, null or stale "
             "pointer, memory of "
             "another module or of its own allocator, or an allocation sampled out); the stack shows where";
    }
    if (heap.Truthy()) {
      return "the access was outside guarded memory: a wild or null pointer, or memory mate-guard does not guard" +
             guarding +
             "; the stack shows where. Add the module whose memory it is to --guard-native so its overruns fault at "
             "the first bad byte";
    }
    return "the access was outside guarded memory: a wild or null pointer, or memory mate-guard does not guard; the "
           "stack shows where. "
           "Guard the module's heap (--guard-native) so its overruns fault at the first bad byte";
  }
  if (code == kSiKernel && SegvOrBus(name)) {
    return "a general-protection fault is no guard-page fault: the instruction at the top of the stack used a "
           "non-canonical pointer (a "
           "garbage or freed-and-reused pointer's high bits), an aligned access of a misaligned address, or a "
           "privileged instruction; "
           "the stack shows where";
  }
  return "the process died by " + name + "; the stack shows where";
}

}  // namespace

std::string SignalName(const JsonValue& v) {
  double n = v.Num(-1);
  if (n >= 1 && n < 32 && n == static_cast<int>(n)) return kSignalNames[static_cast<int>(n)];
  return "signal " + NumText(v);
}

Lines FormatDeath(const JsonValue& e, const JsonValue& d, const FormatOptions& o) {
  Lines lines{DeathHeadline(e, d)};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  Append(&lines, DeathFacts(e, d, o));
  if (!e["accessStack"]["frames"].items.empty()) Append(&lines, NativeLines("stack", e["accessStack"], o));
  if (e["allocation"].Truthy()) {
    lines.push_back(AllocationLine(e["allocation"], e));
    Append(&lines, HistoryLines(e["allocation"], false, o));
  }
  lines.push_back("hint: " + DeathHint(e, d, o));
  return lines;
}

}  // namespace mate
