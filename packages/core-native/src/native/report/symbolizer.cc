#include "report/symbolizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include <string.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "platform/linux/run_tool.h"
#include "report/elf_symbols.h"

namespace mate {

namespace {

struct Location {
  std::string function, file;
  long line = 0, column = 0;
};

struct Query {
  std::string module;
  unsigned long long address = 0;
  std::vector<JsonValue*> frames;
  std::vector<Location> found;
  const char* source = nullptr;
};

long NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

std::string Hex(unsigned long long v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "0x%llx", v);
  return buf;
}

// `file:line:column` (llvm-symbolizer) or `file:line [(discriminator N)]` (addr2line); "??" is unknown.
Location LocationOf(const std::string& fn, std::string where) {
  Location loc;
  if (!fn.empty() && fn != "??") loc.function = fn;
  size_t disc = where.find(" (discriminator ");
  if (disc != std::string::npos) where.resize(disc);
  long nums[2] = {0, 0};
  int found = 0;
  while (found < 2) {
    size_t colon = where.rfind(':');
    if (colon == std::string::npos) break;
    std::string tail = where.substr(colon + 1);
    if (tail.empty() || (tail != "?" && tail.find_first_not_of("0123456789") != std::string::npos)) break;
    nums[found++] = tail == "?" ? 0 : strtol(tail.c_str(), nullptr, 10);
    where.resize(colon);
  }
  if (!where.empty() && where != "??") loc.file = where;
  long line = found == 2 ? nums[1] : nums[0];
  long column = found == 2 ? nums[0] : 0;
  if (!loc.file.empty() && line > 0) {
    loc.line = line;
    if (column > 0) loc.column = column;
  }
  return loc;
}

bool Empty(const std::vector<Location>& locs) {
  for (const Location& l : locs) {
    if (!l.function.empty() || !l.file.empty()) return false;
  }
  return true;
}

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    out.push_back(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

void Fill(JsonValue* into, const Location& l) {
  if (!l.function.empty()) into->Field("function") = JsonValue::String(l.function);
  if (!l.file.empty()) into->Field("file") = JsonValue::String(l.file);
  if (l.line) into->Field("line") = JsonValue::Number(l.line);
  if (l.column) into->Field("column") = JsonValue::Number(l.column);
}

// The field `key` of an object, or nullptr: reading never adds fields (pointers into the tree stay valid).
JsonValue* Find(JsonValue* obj, const char* key) {
  if (obj == nullptr || !obj->IsObject()) return nullptr;
  for (size_t i = obj->fields.size(); i-- > 0;) {
    if (obj->fields[i].first == key) return &obj->fields[i].second;
  }
  return nullptr;
}

void Collect(JsonValue* stack, std::map<std::string, Query>* queries) {
  JsonValue* frames = Find(stack, "frames");
  if (frames == nullptr) return;
  for (JsonValue& f : frames->items) {
    if (!f.IsObject() || f.Has("source")) continue;
    if (!f["module"].IsString() || f["module"].text.empty()) {
      f.Field("source") = JsonValue::String("none");  // an address outside any module: nothing to ask
      continue;
    }
    unsigned long long offset = f["offset"].U64();
    unsigned long long address = offset - (f["returnAddress"].Truthy() && offset > 0 ? 1 : 0);
    std::string key = f["module"].text + "\n" + Hex(address);
    Query& q = (*queries)[key];
    q.module = f["module"].text;
    q.address = address;
    q.frames.push_back(&f);
  }
}

}  // namespace

namespace {

struct Resolved {
  std::vector<Location> found;
  const char* source = nullptr;
};

// Per process: module + address -> what it resolved to (final answers only). Node renders many events of one
// run with the same frames; the crash printer and Python ask once.
std::mutex g_cache_mu;
std::map<std::string, Resolved> g_cache;
const size_t kCacheLimit = 50000;

// The tool to run: pinned (tests), turned off, or found on the search path.
std::string ToolPath(const char* name, const std::string& pinned, bool off, const std::string& search_path) {
  if (off) return "";
  return !pinned.empty() ? pinned : FindOnPath(name, search_path);
}

void Symbolize(const std::vector<JsonValue*>& stacks, const SymbolizeOptions& o) {
  std::map<std::string, Query> queries;
  for (JsonValue* s : stacks) Collect(s, &queries);
  if (queries.empty()) return;
  if (o.cache) {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    for (auto& kv : queries) {
      auto hit = g_cache.find(kv.first);
      if (hit != g_cache.end()) kv.second.found = hit->second.found, kv.second.source = hit->second.source;
    }
  }
  long deadline = NowMs() + o.timeout_ms;
  // A hung tool must not cost the ELF names: the tools stop a fifth early.
  long tool_deadline = deadline - std::min(1000L, static_cast<long>(o.timeout_ms) / 5);
  // A module that is not a regular file (an event can name a FIFO or a device) is never handed to a tool: it
  // would wait on it until the deadline.
  std::map<std::string, bool> regular;
  auto is_regular = [&regular](const std::string& module) {
    auto r = regular.find(module);
    if (r != regular.end()) return r->second;
    struct stat st;
    return regular[module] = stat(module.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  std::vector<Query*> asked;
  for (auto& kv : queries) {
    if (kv.second.source == nullptr && is_regular(kv.second.module) &&
        kv.second.module.find('"') == std::string::npos && kv.second.module.find('\n') == std::string::npos) {
      asked.push_back(&kv.second);
    }
  }
  std::string llvm = ToolPath("llvm-symbolizer", o.llvm_symbolizer, o.no_llvm_symbolizer, o.search_path);
  bool answered = false;
  if (!llvm.empty() && !asked.empty()) {
    std::string input, out;
    for (Query* q : asked) input += "\"" + q->module + "\" " + Hex(q->address) + "\n";
    if (RunTool(llvm, {"--inlining", "--demangle", "--functions=linkage", "--output-style=LLVM"}, input,
                static_cast<int>(tool_deadline - NowMs()), &out)) {
      // Per address: pairs of (function, file:line:column) lines, innermost first, then an empty line.
      std::vector<std::vector<Location>> blocks(1);
      std::vector<std::string> lines = SplitLines(out);
      for (size_t i = 0; i < lines.size(); i++) {
        if (lines[i].empty()) {
          if (!blocks.back().empty()) blocks.emplace_back();
          continue;
        }
        if (i + 1 < lines.size()) blocks.back().push_back(LocationOf(lines[i], lines[i + 1])), i++;
      }
      if (blocks.back().empty()) blocks.pop_back();
      if (blocks.size() == asked.size()) {
        answered = true;
        for (size_t i = 0; i < asked.size(); i++) {
          if (!Empty(blocks[i])) asked[i]->found = blocks[i], asked[i]->source = "llvm-symbolizer";
        }
      }
    }
  }
  // addr2line when llvm-symbolizer is absent or could not run at all (too old for these flags, crashed);
  // not when it answered "unknown".
  std::string addr2line = answered ? "" : ToolPath("addr2line", o.addr2line, o.no_addr2line, o.search_path);
  if (!addr2line.empty()) {
    std::map<std::string, std::vector<Query*>> by_module;
    for (auto& kv : queries) {
      if (kv.second.source == nullptr && is_regular(kv.second.module))
        by_module[kv.second.module].push_back(&kv.second);
    }
    for (auto& m : by_module) {
      std::string input, out;
      for (Query* q : m.second) input += Hex(q->address) + "\n";
      if (!RunTool(addr2line, {"-a", "-f", "-C", "-i", "-e", m.first}, input, static_cast<int>(tool_deadline - NowMs()),
                   &out))
        continue;
      std::map<unsigned long long, std::vector<Location>> found;
      std::vector<Location>* current = nullptr;
      std::vector<std::string> lines = SplitLines(out);
      for (size_t i = 0; i < lines.size(); i++) {
        const std::string& l = lines[i];
        if (l.size() > 2 && l[0] == '0' && l[1] == 'x' &&
            l.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
          current = &found[strtoull(l.c_str(), nullptr, 16)];
        } else if (current != nullptr && !l.empty() && i + 1 < lines.size()) {
          current->push_back(LocationOf(l, lines[i + 1]));
          i++;
        }
      }
      for (Query* q : m.second) {
        auto it = found.find(q->address);
        if (it != found.end() && !Empty(it->second)) q->found = it->second, q->source = "addr2line";
      }
    }
  }
  std::map<std::string, ElfFunctions> tables;
  auto table = [&tables](const std::string& module) -> const ElfFunctions& {
    auto t = tables.find(module);
    if (t == tables.end()) t = tables.emplace(module, ElfFunctions(module)).first;
    return t->second;
  };
  // A name with no debug info behind it came from a symbol table, and llvm-symbolizer takes the nearest .dynsym
  // symbol of a stripped module whatever its size: kept only if a symbol really covers the address.
  for (auto& kv : queries) {
    Query& q = kv.second;
    if (q.source == nullptr || strcmp(q.source, "elf-symbols") == 0 || NowMs() >= deadline) continue;
    bool has_file = false;
    for (const Location& l : q.found) has_file = has_file || !l.file.empty();
    if (!has_file && table(q.module).At(q.address).empty()) q.found.clear(), q.source = nullptr;
  }
  // Out of time for the tools: what the fallback finds is not cached, so a later report may ask them again.
  const bool tools_in_time = NowMs() < tool_deadline;
  // What no tool could name (or there were none): the objects' own ELF symbols, names only.
  for (auto& kv : queries) {
    Query& q = kv.second;
    if (q.source != nullptr || NowMs() >= deadline) continue;
    std::string name = table(q.module).At(q.address);
    if (name.empty()) continue;
    Location l;
    l.function = name;
    q.found.push_back(l);
    q.source = "elf-symbols";
  }
  const bool complete = tools_in_time && NowMs() < deadline;
  std::lock_guard<std::mutex> lock(g_cache_mu);
  for (auto& kv : queries) {
    Query& q = kv.second;
    // A tool's answer is final; a fallback's only when the tools had their time.
    bool final = complete || (q.source != nullptr && strcmp(q.source, "elf-symbols") != 0);
    if (o.cache && final) {
      if (g_cache.size() >= kCacheLimit) g_cache.clear();
      g_cache[kv.first] = Resolved{q.found, q.source != nullptr ? q.source : "none"};
    }
    for (JsonValue* f : q.frames) {
      f->Field("source") = JsonValue::String(q.source != nullptr ? q.source : "none");
      if (q.found.empty()) continue;
      Fill(f, q.found[0]);
      if (q.found.size() > 1) {
        JsonValue& inlined = f->Field("inlined");
        inlined = JsonValue();
        inlined.kind = JsonValue::kArray;
        for (size_t i = 1; i < q.found.size(); i++) {
          JsonValue loc;
          loc.kind = JsonValue::kObject;
          Fill(&loc, q.found[i]);
          inlined.items.push_back(loc);
        }
      }
    }
  }
}

}  // namespace

void SymbolizeEvent(JsonValue* event, const std::string& search_path, int timeout_ms) {
  if (!event->IsObject()) return;
  SymbolizeOptions o;
  o.search_path = search_path;
  o.timeout_ms = timeout_ms;
  JsonValue* allocation = Find(event, "allocation");
  Symbolize({Find(event, "accessStack"), Find(allocation, "allocFrames"), Find(allocation, "freeFrames")}, o);
}

void SymbolizeFrames(JsonValue* frames, const SymbolizeOptions& o) {
  JsonValue stack;
  stack.kind = JsonValue::kObject;
  stack.Field("frames") = *frames;
  Symbolize({&stack}, o);
  *frames = stack["frames"];
}

void ClearSymbolCache() {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  g_cache.clear();
}

}  // namespace mate
