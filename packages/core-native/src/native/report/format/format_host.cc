// Host reports (JS buffers and the native heap): an access past, before or
// after an allocation (a fault or canary damage) and a bad free.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "report/format/formatters.h"
#include "report/format/js_frames.h"
#include "report/format/native_frames.h"
#include "report/format/report_parts.h"

namespace mate {

namespace {

using Wide = __int128;

// The canary side a report is about: before the start when damaged there, else past the end.
const JsonValue& MainSide(const JsonValue& e, bool* before) {
  const JsonValue& d = e["damage"];
  *before = d["before"]["bytes"].Num() != 0;
  return *before ? d["before"] : d["after"];
}

std::string Where(const JsonValue& e) {
  return e["relation"].Str() == "inside" ? "offset " + NumText(e["distance"]) : Bytes(e["distance"]);
}

std::string Headline(const JsonValue& e, const JsonValue& a) {
  std::string out = "ERROR: " + e["kind"].Str();
  if (e["damage"].Truthy()) {
    bool before;
    const JsonValue& side = MainSide(e, &before);
    out += ": " + Bytes(side["farthest"]) + (before ? " before the start of" : " past the end of");
  } else if (e["access"].Truthy()) {
    out += " on " + e["access"].Str() + " at " + e["address"].Str() + ": " + Where(e) + " " +
           RelationText(e["relation"].Str()) + (a["freed"].Truthy() ? " freed" : "");
  }
  out += " allocation #" + NumText(a["id"]) + " (" + Bytes(a["size"]) + ", " + a["mode"].Str() + " mode)" +
         (e["damage"].Truthy() ? " damaged" : "");
  return out;
}

Lines DamageLines(const JsonValue& e) {
  Lines out;
  const JsonValue& d = e["damage"];
  for (int k = 0; k < 2; k++) {
    const JsonValue& side = k == 0 ? d["before"] : d["after"];
    if (!side["bytes"].Truthy()) continue;
    std::string extent = NumText(side["nearest"]) == NumText(side["farthest"])
                             ? Bytes(side["farthest"])
                             : "from " + NumText(side["nearest"]) + " to " + Bytes(side["farthest"]);
    out.push_back("damaged: " + Bytes(side["bytes"]) + ", " + extent +
                  (k == 0 ? " before the start" : " past the end"));
  }
  return out;
}

struct Part {
  const char* label;
  Wide start, end;
};

// One row of boxes, one per part of the slot, and a row marking the part that was hit.
Lines Picture(const JsonValue& e, const JsonValue& a) {
  const JsonValue& slot = a["slot"];
  auto at = [&](const char* key, size_t i) { return static_cast<Wide>(slot[key].At(i).U64()); };
  Wide user = a["start"].U64(), user_end = a["end"].U64();
  std::vector<Part> parts;
  auto add = [&](const char* label, Wide start, Wide end, bool always) {
    if (always || end > start) parts.push_back({label, start, end});
  };
  if (a["mode"].Str() == "tail") {
    add("canary", at("canaryBefore", 0), at("canaryBefore", 1), false);
    add("data", user, user_end, true);
    add("gap (canary)", at("canaryAfter", 0), at("canaryAfter", 1), false);
    add("GUARD", at("guard", 0), at("guard", 1), true);
  } else {
    add("GUARD", at("guard", 0), at("guard", 1), true);
    add("data", user, user_end, true);
    add("canary", at("canaryAfter", 0), at("canaryAfter", 1), false);
  }
  std::string row;
  std::vector<std::pair<size_t, size_t>> cols;
  for (const Part& p : parts) {
    row += '|';
    size_t start = row.size();
    long long span = static_cast<long long>(p.end - p.start);
    row += " " + std::string(p.label) + " " + std::to_string(span) + " B ";
    if (row.size() < start + 14) row.resize(start + 14, ' ');
    cols.emplace_back(start, row.size());
  }
  row += '|';
  Lines lines{"slot: " + row};
  Wide lo = static_cast<Wide>(e["address"].U64());
  Wide hi = lo + 1;
  if (e["damage"].Truthy()) {
    bool before;
    const JsonValue& side = MainSide(e, &before);
    Wide nearest = static_cast<Wide>(side["nearest"].Num()), farthest = static_cast<Wide>(side["farthest"].Num());
    if (before) lo = user - farthest, hi = user - nearest + 1;
    else lo = user_end + nearest - 1, hi = user_end + farthest;
  }
  for (size_t i = 0; i < parts.size(); i++) {
    const Part& p = parts[i];
    bool inside = lo >= p.start && lo < p.end;
    if (!inside && !(i == parts.size() - 1 && lo >= p.end) && !(i == 0 && lo < p.start)) continue;
    Wide width = static_cast<Wide>(cols[i].second - cols[i].first);
    Wide span = p.end - p.start;
    Wide off = 0;
    if (span > 0 && inside) off = ((lo - p.start) * (width - 1)) / span;
    else if (lo >= p.end) off = width - 1;
    Wide extra = hi > lo + 1 ? hi - lo - 1 : 0;
    std::string line(6 + cols[i].first + static_cast<size_t>(off), ' ');
    line += '^' + std::string(static_cast<size_t>(std::min<Wide>(extra, 8)), '~') + ' ' +
            (e["damage"].Truthy() ? std::string("damaged canary") : e["access"].Str());
    lines.push_back(line);
    break;
  }
  return lines;
}

// A Python process's report: told by the allocation's own stack, as every
// Python wording is (an event renders the same whoever renders it; the
// runtime field of an older event is the renderer's). An allocation without
// a stack (captureStacks off) is told by the event's own `runtime`, the
// writing process's executable (python3.11), never the renderer's.
bool FromPython(const JsonValue& e) {
  const std::string& stack = e["allocation"]["allocStack"].Str();
  if (!stack.empty()) return IsPythonStack(stack);
  return StartsWith(Basename(e["runtime"].Str()), "python");
}

// A double or invalid free (the native heap): what was freed, relative to what.
std::string BadFreeHeadline(const JsonValue& e) {
  const JsonValue& a = e["allocation"];
  std::string head = "ERROR: " + e["kind"].Str() + " of " + e["address"].Str() + ": ";
  if (!a.Truthy()) return head + "not the start of any allocation (an address inside mate-guard's guarded region)";
  std::string size = "(" + Bytes(a["size"]) + ", " + a["mode"].Str() + " mode)";
  std::string id = NumText(a["id"]);
  if (e["kind"].Str() == "double-free") return head + "allocation #" + id + " " + size + " was already freed";
  std::string freed = a["freed"].Truthy() ? "freed " : "";
  if (e["address"].Str() == a["start"].Str()) {
    bool js = a["backend"].Str() == "host";
    // A Python process's host slots are numpy arrays' data.
    const char* what = FromPython(e) ? "numpy array allocation" : "JS buffer allocation";
    return head + "the start of " + freed + (js ? what : "allocation") + " #" + id + " " + size +
           (js ? ", which malloc/new never handed out" : "");
  }
  return head + Where(e) + " " + RelationText(e["relation"].Str()) + " " + freed + "allocation #" + id + " " + size +
         ", not its start";
}

// How to rerun with a setting: a Python process's users have pytest's and
// python -m mate_guard's flag (and guard-run's), not installGuardAllocator.
struct RerunSetting {
  std::string flag, value, key;  // key: installGuardAllocator's name; value as JS writes it there
};

std::string RerunFlags(bool python, const std::vector<RerunSetting>& settings) {
  std::string runner, guard_run, api;
  for (const RerunSetting& s : settings) {
    std::string sep = runner.empty() ? "" : " ";
    runner += sep + "--guard-" + s.flag + "=" + s.value;
    guard_run += " --" + s.flag + " " + s.value;
    bool text = !s.value.empty() && !isdigit(static_cast<unsigned char>(s.value[0]));
    api += (api.empty() ? "" : ", ") + s.key + ": " + (text ? "'" + s.value + "'" : s.value);
  }
  if (python) return runner + " for pytest and python -m mate_guard," + guard_run + " for mate guard-run";
  return runner + ", mate guard-run" + guard_run + ", or installGuardAllocator({ " + api + " })";
}

std::string RerunFlags(bool python, const std::string& flag, const std::string& value, const std::string& key) {
  return RerunFlags(python, {{flag, value, key}});
}

std::string Hint(const JsonValue& e, const JsonValue& a) {
  bool tail = a["mode"].Str() == "tail";
  if (e["damage"].Truthy()) {
    bool before;
    MainSide(e, &before);
    if (before && tail)
      return "canary damaged before the start in tail mode: rerun with --guard-mode head to fault at the first bad "
             "access";
    std::string size = NumText(a["size"]), alignment = NumText(a["alignment"]);
    bool py = FromPython(e);
    if (!before && !tail) {
      // Tail mode ends the block short of its guard page by the gap its
      // alignment leaves (malloc's 16 bytes for the native heap) unless its
      // size is a multiple of it: that gap must close too, or the rerun
      // finds the same canary damage again.
      uint64_t align = a["alignment"].U64();
      if (align > 1 && a["size"].U64() % align != 0) {
        if (a["backend"].Str() == "native-heap")
          return "canary damaged past the end in head mode: rerun in tail mode with the native heap's " + size +
                 "-byte allocations placed byte-exact to fault at the first bad access (" +
                 RerunFlags(py, {{"mode", "tail", "mode"}, {"native-exact-size", size, "nativeExactSize"}}) + ")";
        return "canary damaged past the end in head mode: rerun in tail mode byte-exact to fault at the first bad "
               "access (" +
               RerunFlags(py, {{"mode", "tail", "mode"}, {"alignment", "1", "alignment"}}) + ")";
      }
      return "canary damaged past the end in head mode: rerun with --guard-mode tail to fault at the first bad access";
    }
    if (a["backend"].Str() == "native-heap") {
      // The native heap keeps malloc's 16-byte alignment whatever `alignment` says: only this size goes byte-exact.
      return "the write landed in the gap malloc's " + alignment +
             "-byte alignment leaves: rerun with the native heap's " + size +
             "-byte allocations placed byte-exact to fault at the first bad access (" +
             RerunFlags(py, "native-exact-size", size, "nativeExactSize") + ")";
    }
    return "the write landed in the alignment gap (alignment " + alignment +
           "): rerun byte-exact to fault at the first bad access (alignment 1: " +
           RerunFlags(py, "alignment", "1", "alignment") + ")";
  }
  if (a["freed"].Truthy()) {
    return a["freedBy"].Str() == "gc"
               ? "the buffer was garbage-collected while native code still held a pointer into it: keep a reference to "
                 "it (napi_ref / "
                 "Napi::Reference) for as long as native code uses the memory"
               : "the memory was used after it was freed: the stale pointer outlived the allocation";
  }
  if (e["relation"].Str() == "past-end") {
    // A chosen module's own block: the size it asked malloc/new for, not a buffer's or an array's length.
    if (a["backend"].Str() == "native-heap")
      return "native code accessed past the end of a block it allocated: check the size it asked malloc/new for "
             "and its loop bounds";
    return FromPython(e) ? "native code accessed past the end: check the length it was given "
                           "(the array's size / nbytes) and its loop bounds"
                         : "native code accessed past the end: check the length it was given "
                           "(buffer.length / byteLength) and its loop bounds";
  }
  return "native code accessed before the start: check negative indexes and pointer arithmetic";
}

// libc's free/realloc faulting on the 8 or 16 bytes before a guarded
// allocation (its chunk header, in the guard page in head mode): it was
// given a pointer mate-guard allocated, by a call the free router did not see.
bool LibcFreeOfGuarded(const JsonValue& e, const FormatOptions& o, std::string* fn, std::string* caller) {
  const JsonValue& frames = e["accessStack"]["frames"];
  const JsonValue& f0 = frames.At(0);
  std::string name = f0["function"].Str();
  name = name.substr(0, name.find('('));
  if (name.empty() || !f0["module"].Truthy()) return false;
  std::string bare = StartsWith(name, "__libc_") ? name.substr(7) : name;
  if (bare != "free" && bare != "cfree" && bare != "realloc" && bare != "reallocarray" && bare != "malloc_usable_size")
    return false;
  std::string base = Basename(f0["module"].Str());
  if (!(StartsWith(base, "libc.") || StartsWith(base, "libc-"))) return false;
  std::string d = NumText(e["distance"]);
  if (e["relation"].Str() != "before-start" || (d != "8" && d != "16")) return false;
  *caller = "an unknown module";
  for (size_t i = 1; i < frames.items.size(); i++) {
    const std::string& m = frames.At(i)["module"].Str();
    if (!m.empty() && m != f0["module"].Str()) {
      *caller = RelativeToCwd(m, o);
      break;
    }
  }
  *fn = StartsWith(name, "__libc_") ? name.substr(7) : StartsWith(name, "cfree") ? name.substr(1) : name;
  return true;
}

}  // namespace

bool IsBadFree(const JsonValue& e) { return e["kind"].Str() == "double-free" || e["kind"].Str() == "invalid-free"; }

Lines FormatBadFree(const JsonValue& e, const FormatOptions& o) {
  bool twice = e["kind"].Str() == "double-free";
  Lines lines{BadFreeHeadline(e)};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  if (!e["accessStack"]["frames"].items.empty())
    Append(&lines, NativeLines(twice ? "freed again at" : "free called at", e["accessStack"], o));
  if (e["allocation"].Truthy()) {
    lines.push_back(AllocationLine(e["allocation"], e));
    Append(&lines, HistoryLines(e["allocation"], twice, o));
  }
  lines.push_back(std::string("hint: ") +
                  (twice
                       ? "the memory was freed twice; mate-guard ignored the second free (it would corrupt a real "
                         "heap): free each allocation once"
                       : "free/delete must get exactly the pointer malloc/new returned; mate-guard ignored this free"));
  return lines;
}

// A write found in a block the guard did not allocate, held after a chosen
// module freed it (the native heap's foreign quarantine): no slot to
// draw, no allocation site, the free's site.
Lines FormatForeignWrite(const JsonValue& e, const JsonValue& a, const FormatOptions& o) {
  Lines lines{"ERROR: " + e["kind"].Str() + " on " + e["access"].Str() + " at " + e["address"].Str() + ": offset " +
              NumText(e["distance"]) + " inside a freed block of " + Bytes(a["size"]) +
              " that mate-guard did not allocate"};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  lines.push_back(
      "block: " + Bytes(a["size"]) + " at [" + a["start"].Str() + ", " + a["end"].Str() +
      "), allocated outside the guard (not by a chosen module), freed by a chosen module and held after its free "
      "filled with 0xfb (foreign-quarantine); found written when the held block was checked");
  if (a["freeTest"].Truthy()) lines.push_back("freed during test: " + a["freeTest"].Str());
  if (a["freeFrames"].Truthy()) Append(&lines, NativeLines("freed at", a["freeFrames"], o));
  lines.push_back(
      "hint: the block was written after a chosen module freed it: the stale pointer outlived the block. Only a write "
      "is seen "
      "here (the block stays readable, so a read after this free is not), and where it was allocated is unknown");
  return lines;
}

Lines FormatAccess(const JsonValue& e, const JsonValue& a, const FormatOptions& o) {
  if (a["guardMethod"].Str() == "foreign-quarantine") return FormatForeignWrite(e, a, o);
  Lines lines{Headline(e, a)};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  std::string fn, caller;
  bool bypass = LibcFreeOfGuarded(e, o, &fn, &caller);
  if (bypass) {
    lines.push_back("mate-guard: libc's " + fn + "() was given allocation #" + NumText(a["id"]) +
                    ", a pointer mate-guard allocated, and read its heap header before the start; called from a module "
                    "or by a path "
                    "that is not redirected: " +
                    caller + " (not through an import the free router rewrote: a stored pointer to libc's " + fn +
                    ", or code linked statically)");
  }
  if (!e["accessStack"]["frames"].items.empty()) Append(&lines, NativeLines("access", e["accessStack"], o));
  lines.push_back(AllocationLine(a, e));
  if (e["damage"].Truthy()) Append(&lines, DamageLines(e));
  Append(&lines, Picture(e, a));
  Append(&lines, HistoryLines(a, false, o));
  lines.push_back("hint: " + (bypass ? std::string(kFreeBypassHint) : Hint(e, a)));
  return lines;
}

}  // namespace mate
