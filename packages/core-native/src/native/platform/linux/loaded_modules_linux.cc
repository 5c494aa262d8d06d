#include "platform/loaded_modules.h"

#include <elf.h>
#include <link.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace mate {
namespace platform {

namespace {

const char* MainProgramPath() {
  static std::string path = [] {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("<main program>");
  }();
  return path.c_str();
}

struct Walk {
  bool (*fn)(const LoadedObject&, void*);
  void* ctx;
  bool first = true;
};

int Visit(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* w = static_cast<Walk*>(data);
  LoadedObject obj;
  // The main program comes first and has no name.
  obj.main_program = w->first;
  w->first = false;
  obj.path = (info->dlpi_name && info->dlpi_name[0]) ? info->dlpi_name : (obj.main_program ? MainProgramPath() : "");
  obj.base = static_cast<uintptr_t>(info->dlpi_addr);
  obj.phdrs = info->dlpi_phdr;
  obj.phnum = info->dlpi_phnum;
  return w->fn(obj, w->ctx) ? 0 : 1;
}

// One loaded segment: [start, end) of a module.
struct Range {
  uintptr_t start, end, base;
  const char* path;
};

struct Map {
  size_t n;
  Range ranges[1];  // n of them, sorted by start
};

std::atomic<const Map*> g_map{nullptr};
std::mutex g_map_mu;
uint64_t g_map_generation = ~0ull;

}  // namespace

void ForEachLoadedObject(bool (*fn)(const LoadedObject& obj, void* ctx), void* ctx) {
  Walk w{fn, ctx};
  dl_iterate_phdr(Visit, &w);
}

uint64_t LoadGeneration() {
  uint64_t gen = 0;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t size, void* data) -> int {
        // dlpi_adds/dlpi_subs exist since glibc 2.4 (size tells).
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
          *static_cast<uint64_t*>(data) = info->dlpi_adds * 1000003ull + info->dlpi_subs;
        return 1;  // the first object is enough
      },
      &gen);
  return gen;
}

void RefreshModuleMap() {
  std::lock_guard<std::mutex> lock(g_map_mu);
  uint64_t gen = LoadGeneration();
  if (gen == g_map_generation && g_map.load(std::memory_order_acquire) != nullptr) return;
  std::vector<Range> ranges;
  ForEachLoadedObject(
      [](const LoadedObject& obj, void* ctx) {
        auto* out = static_cast<std::vector<Range>*>(ctx);
        // Paths live as long as the process: a handler may print them after
        // the object is gone.
        const char* path = strdup(obj.path);
        const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
        for (uint16_t i = 0; i < obj.phnum; i++) {
          if (ph[i].p_type != PT_LOAD) continue;
          uintptr_t start = obj.base + ph[i].p_vaddr;
          out->push_back(Range{start, start + ph[i].p_memsz, obj.base, path});
        }
        return true;
      },
      &ranges);
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  size_t bytes = sizeof(Map) + sizeof(Range) * (ranges.empty() ? 0 : ranges.size() - 1);
  auto* map = static_cast<Map*>(::operator new(bytes));
  map->n = ranges.size();
  std::copy(ranges.begin(), ranges.end(), map->ranges);
  // The old map is kept: a handler on another thread may be reading it.
  g_map.store(map, std::memory_order_release);
  g_map_generation = gen;
}

bool FindModule(uintptr_t pc, const char** path, uintptr_t* base) {
  const Map* map = g_map.load(std::memory_order_acquire);
  if (map == nullptr || map->n == 0) return false;
  size_t lo = 0, hi = map->n;  // first range with start > pc
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (map->ranges[mid].start <= pc) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return false;
  const Range& r = map->ranges[lo - 1];
  if (pc >= r.end) return false;
  *path = r.path;
  *base = r.base;
  return true;
}

namespace {

void RangeOf(const LoadedObject& obj, uintptr_t* lo, uintptr_t* hi) {
  const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (uint16_t i = 0; i < obj.phnum; i++) {
    if (ph[i].p_type != PT_LOAD) continue;
    *lo = std::min<uintptr_t>(*lo, obj.base + ph[i].p_vaddr);
    *hi = std::max<uintptr_t>(*hi, obj.base + ph[i].p_vaddr + ph[i].p_memsz);
  }
}

struct RangeQuery {
  uintptr_t want;  // an address inside the object; 0: the main program
  uintptr_t lo, hi;
  bool found;
};

bool MatchRange(const LoadedObject& obj, void* p) {
  auto* q = static_cast<RangeQuery*>(p);
  uintptr_t lo, hi;
  RangeOf(obj, &lo, &hi);
  bool hit = q->want == 0 ? obj.main_program : (q->want >= lo && q->want < hi);
  if (!hit) return true;
  q->lo = lo;
  q->hi = hi;
  q->found = true;
  return false;
}

}  // namespace

bool ObjectRange(const void* addr, uintptr_t* start, uintptr_t* end) {
  RangeQuery q{reinterpret_cast<uintptr_t>(addr), 0, 0, false};
  if (q.want != 0) ForEachLoadedObject(MatchRange, &q);
  *start = q.lo;
  *end = q.hi;
  return q.found;
}

bool MainProgramRange(uintptr_t* start, uintptr_t* end) {
  RangeQuery q{0, 0, 0, false};
  ForEachLoadedObject(MatchRange, &q);
  *start = q.lo;
  *end = q.hi;
  return q.found;
}

}  // namespace platform
}  // namespace mate
