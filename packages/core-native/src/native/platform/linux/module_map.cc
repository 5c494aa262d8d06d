#include "platform/linux/module_map.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mate {

namespace {

struct Range {
  uintptr_t start, end;  // [start, end) of one PT_LOAD segment in memory
  uint32_t module;
};

// Immutable once published.
struct Snapshot {
  unsigned long long adds, subs;
  size_t count;
  Range ranges[1];  // `count` of them, sorted by start
};

struct ModuleSlot {
  const char* path;
  uintptr_t bias;
};

// Enough for any real process; objects past it resolve to "unknown".
constexpr uint32_t kMaxModules = 4096;
ModuleSlot g_modules[kMaxModules];
std::atomic<uint32_t> g_module_count{0};
std::atomic<const Snapshot*> g_current{nullptr};

std::mutex g_mu;                                                   // serializes builders, never taken by lookups
std::map<std::pair<std::string, uintptr_t>, uint32_t> g_index_of;  // under g_mu

struct Counters {
  unsigned long long adds = 0, subs = 0;
  bool known = false;
};

int ReadCounters(struct dl_phdr_info* info, size_t size, void* data) {
  auto* c = static_cast<Counters*>(data);
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    c->known = true;
  }
  return 1;  // the counters are the same in every entry: stop at the first
}

Counters LoaderCounters() {
  Counters c;
  dl_iterate_phdr(ReadCounters, &c);
  return c;
}

struct Seen {
  std::string name;
  uintptr_t bias;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;
};

int Collect(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* out = static_cast<std::vector<Seen>*>(data);
  Seen s;
  s.name = info->dlpi_name ? info->dlpi_name : "";
  s.bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) & ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    s.segments.emplace_back(start, start + ph.p_memsz);
  }
  if (!s.segments.empty()) out->push_back(std::move(s));
  return 0;
}

// The main program has an empty name; dlopen keeps relative names as given.
std::string AbsolutePath(const std::string& name) {
  char buf[PATH_MAX];
  if (name.empty()) {
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return name;
    buf[n] = '\0';
    return buf;
  }
  if (name[0] == '/') return name;
  if (realpath(name.c_str(), buf) != nullptr) return buf;
  return name;  // e.g. linux-vdso.so.1: not a file
}

// Under g_mu.
uint32_t IndexOf(const std::string& path, uintptr_t bias) {
  auto key = std::make_pair(path, bias);
  auto it = g_index_of.find(key);
  if (it != g_index_of.end()) return it->second;
  uint32_t n = g_module_count.load(std::memory_order_relaxed);
  if (n >= kMaxModules) return kNoModule;
  g_modules[n].path = strdup(path.c_str());  // never freed: handlers may hold it
  g_modules[n].bias = bias;
  g_module_count.store(n + 1, std::memory_order_release);
  g_index_of.emplace(std::move(key), n);
  return n;
}

bool LookupSnapshot(const Snapshot* s, uintptr_t pc, ModuleRef* out) {
  if (s == nullptr) return false;
  size_t lo = 0, hi = s->count;
  while (lo < hi) {  // first range starting after pc
    size_t mid = lo + (hi - lo) / 2;
    if (s->ranges[mid].start <= pc) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return false;
  const Range& r = s->ranges[lo - 1];
  if (pc >= r.end || r.module == kNoModule) return false;
  out->index = r.module;
  out->path = g_modules[r.module].path;
  out->offset = pc - g_modules[r.module].bias;
  return true;
}

}  // namespace

bool ModuleMapStale() {
  const Snapshot* s = g_current.load(std::memory_order_acquire);
  if (s == nullptr) return true;
  Counters c = LoaderCounters();
  return !c.known || c.adds != s->adds || c.subs != s->subs;
}

bool RefreshModuleMap(bool force) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!force && !ModuleMapStale()) return false;
  // Counters first: an object loaded while we iterate makes the next check
  // see a change and rebuild, never the reverse.
  Counters c = LoaderCounters();
  std::vector<Seen> seen;
  dl_iterate_phdr(Collect, &seen);
  std::vector<Range> ranges;
  for (const Seen& s : seen) {
    uint32_t index = IndexOf(AbsolutePath(s.name), s.bias);
    for (const auto& seg : s.segments) ranges.push_back(Range{seg.first, seg.second, index});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  size_t bytes = sizeof(Snapshot) + sizeof(Range) * (ranges.empty() ? 0 : ranges.size() - 1);
  auto* snap = static_cast<Snapshot*>(calloc(1, bytes));
  if (snap == nullptr) return false;
  snap->adds = c.adds;
  snap->subs = c.subs;
  snap->count = ranges.size();
  std::copy(ranges.begin(), ranges.end(), snap->ranges);
  // The old snapshot is left in place for any reader still inside it.
  g_current.store(snap, std::memory_order_release);
  return true;
}

bool LookupModule(uintptr_t pc, ModuleRef* out) {
  *out = ModuleRef{};
  out->offset = pc;
  if (LookupSnapshot(g_current.load(std::memory_order_acquire), pc, out)) return true;
#if defined(__GLIBC__) && defined(DLFO_STRUCT_HAS_EH_DBASE)
  // Loaded since the last refresh: glibc's own lock-free object lookup.
  struct dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(pc), &found) == 0 && found.dlfo_link_map != nullptr) {
    const struct link_map* map = found.dlfo_link_map;
    out->offset = pc - map->l_addr;
    out->path = (map->l_name && map->l_name[0]) ? map->l_name : nullptr;
    return true;
  }
#endif
  return false;
}

uint32_t ModuleCount() { return g_module_count.load(std::memory_order_acquire); }

const char* ModulePath(uint32_t index) { return index < ModuleCount() ? g_modules[index].path : nullptr; }

uintptr_t ModuleLoadBias(uint32_t index) { return index < ModuleCount() ? g_modules[index].bias : 0; }

}  // namespace mate
