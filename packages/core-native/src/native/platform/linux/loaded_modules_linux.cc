#include "platform/loaded_modules.h"

#include <elf.h>
#include <link.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

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
