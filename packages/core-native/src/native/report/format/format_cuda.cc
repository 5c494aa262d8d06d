// CUDA device reports: a kernel's exception (an illegal address, CUDA's
// fault, reported with no address; a device-side assert; others), a
// cross-stream free and an out-of-memory.
#include <cxxabi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <set>

#include "report/format/formatters.h"
#include "report/format/js_frames.h"
#include "report/format/report_parts.h"

namespace mate {

namespace {

// `void ns::Kernel<float>(float*, long)` -> `ns::Kernel<float>`: template arguments stay, they say which kernel it is.
std::string KernelDisplayName(std::string s) {
  if (StartsWith(s, "void ")) s = s.substr(5);
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') {
        depth++;
      } else if (s[i] == '(' && --depth == 0) {
        s.resize(i);
        break;
      }
    }
  }
  return s;
}

// A C++ kernel's name demangled where it can be; Triton's and C's are plain.
std::string KernelName(const JsonValue& k) {
  if (!k.Truthy()) return "(unknown kernel)";
  const std::string& name = k.Str();
  if (!StartsWith(name, "_Z")) return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (d == nullptr) return name;
  std::string out = KernelDisplayName(d);
  free(d);
  return out;
}

std::string StreamName(const JsonValue& stream) {
  uint64_t v = stream.U64();
  if (v == 0 || v == 1) return "the default stream";
  if (v == 2) return "the per-thread default stream";
  return "stream " + stream.Str();
}

std::string RankText(const JsonValue& d) {
  if (d["rank"].IsNull() && d["worldSize"].IsNull()) return "";
  std::string out = " (rank " + (d["rank"].IsNull() ? std::string("?") : NumText(d["rank"])) +
                    (d["worldSize"].IsNull() ? "" : " of " + NumText(d["worldSize"]));
  if (!d["localRank"].IsNull()) out += ", local rank " + NumText(d["localRank"]);
  return out + ")";
}

std::string AllocationBrief(const JsonValue& a) {
  return "#" + NumText(a["id"]) + " (" + Bytes(a["size"]) + " at " + a["start"].Str() + ", " + a["mode"].Str() +
         " mode" + (a["freed"].Truthy() ? ", freed: its range is unmapped" : "") + ")";
}

// Code torch.compile generated (Inductor's cache of wrappers and kernels): not the user's.
bool Generated(const std::string& f) {
  for (size_t at = 0; (at = f.find("torchinductor_", at)) != std::string::npos; at++) {
    if (at == 0 || (f[at - 1] != '/' && f[at - 1] != '\\')) continue;
    size_t end = at + 14;
    while (end < f.size() && f[end] != '/' && f[end] != '\\') end++;
    if (end > at + 14 && end < f.size()) return true;
  }
  return false;
}

// A Python or JS call site: the user's own first frame, and for a torch.compile'd function the generated code's frame.
struct CallSite {
  std::string user, generated, caller;
};

CallSite SiteOf(const JsonValue& stack, const FormatOptions& o) {
  CallSite s;
  if (!stack.Truthy()) return s;
  std::vector<std::string> own;
  std::string generated;
  for (const std::string& l : TrimJsStack(stack.Str(), o).frames) {
    std::string t = Trim(l);
    if (!StartsWith(t, "at ")) continue;
    std::string f = Trim(t.substr(3));
    if (Generated(f)) {
      if (generated.empty()) generated = f;
    } else {
      own.push_back(f);
    }
  }
  // Through generated code the first own frame is the compiled function's line (dynamo keeps its frame); the next is
  // where it was called.
  s.user = !own.empty() ? own[0] : generated;
  if (!own.empty()) s.generated = generated;
  if (!generated.empty() && own.size() > 1) s.caller = own[1];
  return s;
}

Lines InputLines(const JsonValue& l, const std::string& indent, const std::string& dir) {
  const JsonValue& inputs = l["inputs"];
  if (inputs.items.empty()) return {};
  Lines lines{indent + "  inputs saved before it ran (--guard-dump-inputs):"};
  for (const JsonValue& i : inputs.items) {
    std::string cut =
        i["saved"].Num() < i["size"].Num() ? ", the first " + Bytes(i["saved"]) + " (truncated at the cap)" : "";
    const std::string& file = i["file"].Str();
    std::string where = StartsWith(file, "/") || dir.empty() ? file : dir + "/" + file;
    lines.push_back(indent + "    argument " + NumText(i["param"]) + ": allocation #" + NumText(i["allocation"]) +
                    " (" + Bytes(i["size"]) + cut + "): " + where);
  }
  return lines;
}

Lines LaunchLines(const JsonValue& l, const std::string& indent, const std::string& dir, const FormatOptions& o) {
  Lines lines{indent + KernelName(l["kernel"]) + " (launch " + NumText(l["number"]) + " on " + StreamName(l["stream"]) +
              ")"};
  CallSite site = SiteOf(l["site"], o);
  if (!site.user.empty()) lines.push_back(indent + "  launched at " + site.user);
  if (!site.generated.empty()) {
    lines.push_back(indent + "  through torch.compile's generated code at " + site.generated +
                    (site.caller.empty() ? "" : ", called from " + site.caller));
  }
  if (l["test"].Truthy()) lines.push_back(indent + "  launched during test: " + l["test"].Str());
  if (l["argCount"].Num() == 0) lines.push_back(indent + "  no argument points into a guarded allocation");
  // One line per pointer: a kernel given the same pointer in several parameters names them together.
  struct Group {
    std::string key;
    std::vector<std::string> where;
    const JsonValue* arg;
  };
  std::vector<Group> groups;
  for (const JsonValue& arg : l["args"].items) {
    std::string where = arg["offset"].Truthy()
                            ? NumText(arg["param"]) + " (at byte " + NumText(arg["offset"]) + " of it)"
                            : NumText(arg["param"]);
    std::string key = arg["value"].Str() + "/" + NumText(arg["allocation"]["id"]);
    Group* seen = nullptr;
    for (Group& g : groups) seen = g.key == key ? &g : seen;
    if (seen == nullptr) {
      groups.push_back({key, {where}, &arg});
    } else {
      bool has = false;
      for (const std::string& w : seen->where) has = has || w == where;
      if (!has) seen->where.push_back(where);
    }
  }
  for (const Group& g : groups) {
    const JsonValue& arg = *g.arg;
    __int128 off = static_cast<__int128>(arg["value"].U64()) - static_cast<__int128>(arg["allocation"]["start"].U64());
    std::string rel = off == 0  ? ""
                      : off > 0 ? " + " + std::to_string(static_cast<long long>(off))
                                : " - " + std::to_string(static_cast<long long>(-off));
    std::string where;
    for (const std::string& w : g.where) where += (where.empty() ? "" : ", ") + w;
    lines.push_back(indent + "  " + (g.where.size() > 1 ? "arguments " : "argument ") + where + " = " +
                    arg["value"].Str() + ": allocation " + AllocationBrief(arg["allocation"]) +
                    (rel.empty() ? "" : ", pointer at its start" + rel));
  }
  double more = l["argCount"].Num() - static_cast<double>(l["args"].items.size());
  if (more > 0)
    lines.push_back(indent + "  \xE2\x80\xA6 " + std::to_string(static_cast<long long>(more)) +
                    " more guarded pointer arguments");
  Append(&lines, InputLines(l, indent, dir));
  return lines;
}

// A pointer inside a parameter larger than a pointer: a struct passed by value, whose stale slots the kernel may never
// read.
bool InStruct(const JsonValue& a) { return a["paramSize"].Num(8) > 8; }

std::string ArgPlace(const JsonValue& a) {
  return "parameter " + NumText(a["param"]) + (a["offset"].Truthy() ? " at byte " + NumText(a["offset"]) : "");
}

struct Suspect {
  const JsonValue* l;
  const JsonValue* arg;
};

// Which guard (or unmapped freed range) was hit: "most likely" only where the evidence singles one out.
std::string HitLine(const std::vector<const JsonValue*>& suspects) {
  std::vector<Suspect> direct, nested, direct_freed, direct_live, nested_freed;
  for (const JsonValue* l : suspects) {
    for (const JsonValue& arg : (*l)["args"].items) {
      Suspect x{l, &arg};
      bool freed = arg["allocation"]["freed"].Truthy();
      if (InStruct(arg)) {
        nested.push_back(x);
        if (freed) nested_freed.push_back(x);
      } else {
        direct.push_back(x);
        (freed ? direct_freed : direct_live).push_back(x);
      }
    }
  }
  auto ids = [](const std::vector<Suspect>& xs) {
    std::set<std::string> s;
    for (const Suspect& x : xs) s.insert(NumText((*x.arg)["allocation"]["id"]));
    return s.size();
  };
  auto what = [](const JsonValue& l) {
    return std::string(l["faulted"].Truthy() ? "the faulting launch" : "the launch in flight");
  };
  auto use_after_free = [](const Suspect& x) {
    return "the unmapped range of freed allocation #" + NumText((*x.arg)["allocation"]["id"]) + ", passed to " +
           KernelName((*x.l)["kernel"]) + " after it was freed" +
           (InStruct(*x.arg) ? " (inside a by-value struct, " + ArgPlace(*x.arg) + ")" : "") + " (use after free)";
  };
  auto guard_of = [](const Suspect& x, const std::string& only) {
    const JsonValue& a = (*x.arg)["allocation"];
    bool tail = a["mode"].Str() == "tail";
    return "the guard " + std::string(tail ? "after the end" : "before the start") + " of allocation #" +
           NumText(a["id"]) + ", " + only + " (an " + (tail ? "overrun" : "underrun") + " of it)";
  };
  if (ids(direct_freed) == 1) return "hit: most likely " + use_after_free(direct_freed[0]);
  if (!direct_freed.empty()) return "";
  if (ids(direct_live) == 1 && (direct_live.size() == 1 || suspects.size() == 1)) {
    const Suspect& x = direct_live[0];
    std::string only = !nested.empty()
                           ? "the only pointer passed as an argument (to " + KernelName((*x.l)["kernel"]) + ")"
                           : "the only guarded pointer " + what(*x.l) + " was given";
    if (nested_freed.empty()) return "hit: most likely " + guard_of(x, only);
    return "hit: two explanations remain: " + guard_of(x, only) + ", or " + use_after_free(nested_freed[0]) +
           "; a struct's stale slot is often never read: launch blocking tells them apart";
  }
  if (direct.empty() && ids(nested_freed) == 1 && nested.size() == nested_freed.size())
    return "hit: most likely " + use_after_free(nested_freed[0]);
  if (direct.empty() && nested.size() == 1 && suspects.size() == 1) {
    return "hit: most likely " +
           guard_of(nested[0], "the only guarded pointer " + what(*nested[0].l) +
                                   " was given (inside a by-value struct, " + ArgPlace(*nested[0].arg) + ")");
  }
  return "";
}

// How to get the faulting launch's inputs on record, when they are not: --guard-dump-inputs with a glob for its kernel.
std::string DumpHint(const std::vector<const JsonValue*>& faulted) {
  if (faulted.empty() || !(*faulted[0])["kernel"].Truthy()) return "";
  for (const JsonValue* l : faulted) {
    if (!(*l)["inputs"].items.empty()) return "";
  }
  std::string name = KernelName((*faulted[0])["kernel"]);
  for (size_t at; (at = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(at, 23);
  name = name.substr(0, name.find('<'));
  name = name.substr(0, name.find('('));
  size_t colons = name.rfind("::");
  if (colons != std::string::npos) name = name.substr(colons + 2);
  name = Trim(name);
  size_t sp = name.find_last_of(" \t");
  if (sp != std::string::npos) name = name.substr(sp + 1);
  return name.empty()
             ? ""
             : " (--guard-dump-inputs '*" + name + "*' saves its inputs before each launch, to run it alone on them)";
}

// 1.5 KiB, 2.00 GiB: as Number.prototype.toFixed prints them (a tie rounds up, not to even).
std::string Fixed(double v, int digits) {
  long double scale = digits == 2 ? 100.0L : digits == 1 ? 10.0L : 1.0L;
  long double x = static_cast<long double>(v) * scale;
  long double r = floorl(x);
  if (x - r >= 0.5L) r += 1;
  unsigned long long n = static_cast<unsigned long long>(r);
  unsigned long long unit = static_cast<unsigned long long>(scale);
  std::string out = std::to_string(n / unit);
  if (digits > 0) {
    std::string frac = std::to_string(n % unit);
    out += "." + std::string(digits - frac.size(), '0') + frac;
  }
  return out;
}

std::string FormatBytes(double n) {
  if (n >= 1073741824.0) return Fixed(n / 1073741824.0, 2) + " GiB";
  if (n >= 1048576.0) return Fixed(n / 1048576.0, 1) + " MiB";
  if (n >= 1024.0) return Fixed(n / 1024.0, 1) + " KiB";
  return Fixed(n, 0) + " B";
}

}  // namespace

bool IsKernelException(const JsonValue& e) {
  const std::string& k = e["kind"].Str();
  return k == "illegal-address" || k == "device-assert" || k == "device-fault";
}

Lines FormatKernelException(const JsonValue& e, const FormatOptions& o) {
  const JsonValue& d = e["device"];
  bool address = e["kind"].Str() == "illegal-address";
  std::string ordinal = d["ordinal"].IsNull() ? "0" : NumText(d["ordinal"]);
  Lines lines{"ERROR: " + e["kind"].Str() + ": the GPU reported " +
              (d["error"].IsNull() ? "CUDA_ERROR_ILLEGAL_ADDRESS" : d["error"].Str()) + " (" +
              (d["errorText"].IsNull() ? "an illegal memory access was encountered" : d["errorText"].Str()) +
              ") on device " + ordinal + RankText(d) + ", seen by " +
              (d["foundBy"].IsNull() ? "the device guard" : d["foundBy"].Str())};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  const JsonValue& t = e["launches"];
  const JsonValue& list = t["list"];
  const std::string& file = e["file"].Truthy() ? e["file"].Str() : o.event_file;
  std::string dir = file.empty() ? "" : Dirname(file);
  std::vector<const JsonValue*> faulted, suspects;
  for (const JsonValue& l : list.items) {
    if (l["faulted"].Truthy()) faulted.push_back(&l);
  }
  if (!faulted.empty()) {
    suspects = faulted;
  } else {
    for (const JsonValue& l : list.items) {
      if (l["argCount"].Num() > 0) suspects.push_back(&l);
    }
  }
  if (!faulted.empty()) {
    lines.push_back("the kernel that faulted (launch blocking: its own synchronize returned the error):");
    for (const JsonValue* l : faulted) Append(&lines, LaunchLines(*l, "  ", dir, o));
  } else if (t["tracking"].Truthy() && !list.items.empty()) {
    std::string total = NumText(t["total"]);
    lines.push_back("kernels launched since the last synchronize, not known to have finished (" + total +
                    (t["total"].Num() > static_cast<double>(list.items.size())
                         ? ", the newest " + std::to_string(list.items.size())
                         : "") +
                    ", newest first): one of them " + (address ? "made the bad access" : "raised it"));
    for (const JsonValue& l : list.items) Append(&lines, LaunchLines(l, "  ", dir, o));
  } else if (t["tracking"].Truthy()) {
    lines.push_back("no kernel launch was in flight that launch tracking saw");
  } else {
    lines.push_back("the faulting kernel is not known: launch tracking was off" +
                    (t["off"].Truthy() ? " (" + t["off"].Str() + ")" : std::string()));
  }
  std::string hit = address ? HitLine(suspects) : "";
  if (!hit.empty()) lines.push_back(hit);
  const JsonValue& c = address ? e["candidates"] : JsonValue::Null();
  if (c.Truthy() && suspects.empty()) {
    lines.push_back("guarded allocations live on device " + ordinal + " (" + std::to_string(c["live"].items.size()) +
                    " of " + NumText(c["liveTotal"]) + ", newest first):");
    for (const JsonValue& a : c["live"].items) {
      lines.push_back("  " + AllocationBrief(a) +
                      (a["allocTest"].Truthy() ? ", allocated during test: " + a["allocTest"].Str() : ""));
      std::string at = SiteOf(a["allocStack"], o).user;
      if (!at.empty()) lines.push_back("    allocated at " + at);
    }
  }
  // A stale address reaches a kernel as often by arithmetic on a live pointer as by a freed argument: the freed ranges
  // are named either way.
  bool suspect_freed = false;
  for (const JsonValue* l : suspects) {
    for (const JsonValue& a : (*l)["args"].items) suspect_freed = suspect_freed || a["allocation"]["freed"].Truthy();
  }
  if (c.Truthy() && !c["freed"].items.empty() && !suspect_freed) {
    lines.push_back("freed allocations whose ranges are unmapped (a stale address into one faults; newest first):");
    for (const JsonValue& a : c["freed"].items) {
      lines.push_back("  " + AllocationBrief(a));
      std::string at = SiteOf(a["allocStack"], o).user;
      if (!at.empty()) lines.push_back("    allocated at " + at);
      std::string freed_at = SiteOf(a["freeStack"], o).user;
      lines.push_back("    freed at " + (freed_at.empty() ? std::string("(no stack captured)") : freed_at));
    }
  }
  bool exact = !faulted.empty();
  if (!address) {
    std::string what = e["kind"].Str() == "device-assert"
                           ? "a device-side assert failed (an index or bounds check in the kernel: CUDA printed its "
                             "condition, file and line before this report)"
                           : "the kernel raised " +
                                 (d["error"].IsNull() ? std::string("a CUDA exception") : d["error"].Str()) +
                                 ", not a guarded access";
    lines.push_back("hint: " + what + "; " +
                    (exact ? "the kernel above is the one"
                           : "rerun with launch blocking (--guard-launch-blocking, mate guard-run --launch-blocking) "
                             "to name the launch exactly"));
    return lines;
  }
  if (exact) {
    lines.push_back(
        "hint: CUDA reports no faulting address: the access went past the guarded allocations the kernel was given (or "
        "into a freed one); check its index bounds" +
        DumpHint(faulted));
  } else {
    lines.push_back(
        std::string("hint: CUDA reports the fault at a later call, with no address: rerun with launch blocking "
                    "(--guard-launch-blocking, mate "
                    "guard-run --launch-blocking) to name the faulting launch exactly, or in the opposite mode (") +
        (e["candidates"]["live"].At(0)["mode"].Str() == "head" ? "--guard-mode tail" : "--guard-mode head") +
        ") so the bad write lands in canary bytes and the report names its allocation");
  }
  return lines;
}

Lines FormatCrossStreamFree(const JsonValue& e, const JsonValue& a, const FormatOptions& o) {
  const JsonValue& st = e["streams"];
  std::string free_on = StreamName(st["free"]), use_on = StreamName(st["use"]);
  Lines lines{"ERROR: cross-stream-free: allocation #" + NumText(a["id"]) + " (" + Bytes(a["size"]) + ", " +
              a["mode"].Str() + " mode) freed on " + free_on + " while a kernel on " + use_on +
              " used it and the free was not ordered after that use"};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  if (st["useLaunch"].Truthy()) {
    lines.push_back("the use:");
    Append(&lines, LaunchLines(st["useLaunch"], "  ", "", o));
  }
  lines.push_back(AllocationLine(a, e));
  Append(&lines, HistoryLines(a, false, o));
  lines.push_back(
      "hint: make " + free_on + " wait for " + use_on +
      "'s work before freeing (record an event on it after the use and wait on it: cudaStreamWaitEvent, "
      "torch.cuda.current_stream().wait_stream(s)), synchronize, or declare the use (Tensor.record_stream(s), "
      "mate_guard_record_stream); mate-guard delayed this free until that work was done, so nothing was corrupted in "
      "this run");
  return lines;
}

Lines FormatOutOfMemory(const JsonValue& e, const JsonValue& m) {
  const JsonValue& d = e["device"];
  std::string ordinal = d["ordinal"].IsNull() ? "0" : NumText(d["ordinal"]);
  double live = m["liveBytes"].Num(), mapped = m["liveMapped"].Num();
  double overhead = mapped - live > 0 ? mapped - live : 0;
  Lines lines{"ERROR: out-of-memory: a guarded allocation of " + FormatBytes(m["requested"].Num()) + " on device " +
              ordinal + RankText(d) + " failed: the GPU has " + FormatBytes(m["deviceFree"].Num()) + " free of " +
              FormatBytes(m["deviceTotal"].Num())};
  if (e["test"].Truthy()) lines.push_back("test: " + e["test"].Str());
  lines.push_back("the guard held, when it failed:");
  lines.push_back("  live guarded allocations: " + NumText(m["liveCount"]) + ", " + FormatBytes(live) + " asked for, " +
                  FormatBytes(mapped) + " mapped (guard overhead " + FormatBytes(overhead) + ": each holds whole " +
                  FormatBytes(d["granule"].Num(2097152.0)) + " granules)");
  lines.push_back("  freed allocations the GPU still used (unmapped once it is done): " +
                  FormatBytes(m["pendingBytes"].Num()));
  lines.push_back("  pooled chunks not in use: " + FormatBytes(m["pooledBytes"].Num()) +
                  "; ranges mapped ahead: " + FormatBytes(m["readyBytes"].Num()));
  lines.push_back("  quarantined freed ranges: " + NumText(m["quarantinedCount"]) +
                  " (unmapped: " + FormatBytes(m["quarantinedBytes"].Num()) + " of address space, no memory)");
  lines.push_back(
      "before failing it gave back " + FormatBytes(m["givenBack"].Num()) +
      " and retried once; the caller got the out-of-memory error at once (PyTorch: torch.OutOfMemoryError)");
  if (m["failures"].Num() > 1)
    lines.push_back(NumText(m["failures"]) +
                    " allocations have failed so far in this process; only the first is reported");
  lines.push_back(std::string("hint: the program ran out of GPU memory, which is not a memory bug; under the guard "
                              "every live allocation holds at least one whole granule") +
                  (overhead > live / 10 ? " (here the overhead is a large share: many small allocations)" : "") +
                  ". Try a smaller batch or fewer live tensors, or guard only part of the job (mate guard-run on the "
                  "step under suspicion)");
  return lines;
}

}  // namespace mate
