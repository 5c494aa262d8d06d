// The least a page-guarded device allocator can be: every allocation alone
// in its own granules, its last byte against an unmapped granule, at an
// address not used before; a freed range waits for its stream's work (an
// event recorded at the free) and is then unmapped (FLOOR_SHARE of the frees,
// 0.57 by default: the share the guard unmaps in the reference loop) or
// handed out again still mapped (the rest, as the guard recycles them); a
// background thread keeps ranges of each size mapped and opened ahead. No
// canaries, records, call sites, tracking or reports: loop_py.sh's
// `pluggable-layout` variant, the floor under the guard's own allocator,
// where quarantine_floor.cc's `pluggable-floor` is the driver traffic alone.
// Built by null_pluggable.py --layout (needs cuda.h).
#include <cuda.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "driver_symbol.h"

namespace {

struct Api {
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, size_t);
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*event_create)(CUevent*, unsigned int);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_query)(CUevent);
  CUresult (*ctx_get)(CUcontext*);
  CUresult (*ctx_set)(CUcontext);
};

struct Range {
  CUdeviceptr at = 0;
  size_t granules = 0;
  CUmemGenericAllocationHandle handle = 0;
};

// An event recorded after freed ranges' last use, shared by the frees of one stream in one pass.
struct Fence {
  CUevent event;
  int refs;
};

struct Freed {
  Range range;
  CUstream stream;
  Fence* fence;  // null until the background thread records one
  bool unmap;
};

struct Class {
  std::vector<Range> ready;
  size_t target = 4;
};

struct Layout {
  Api api{};
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  CUcontext ctx = nullptr;
  CUmemAllocationProp prop{};
  CUmemAccessDesc access{};
  size_t granule = 0;
  CUdeviceptr next = 0, end = 0;  // fresh addresses: never reused
  double share = 0.57, owed = 0;
  size_t align = 16;  // LAYOUT_ALIGN: the pointer's alignment (the guard's default, 16)
  std::unordered_map<size_t, Class> classes;
  std::unordered_map<CUdeviceptr, Range> live;
  std::deque<Freed> freed;
  std::vector<CUevent> events;
  std::unordered_map<size_t, std::vector<CUmemGenericAllocationHandle>> idle;  // unmapped chunks
  unsigned long long mapped = 0, unmapped = 0, recycled = 0, inline_maps = 0;
};

Layout& L() {
  static Layout* l = new Layout();  // never destroyed: frees may come during exit
  return *l;
}

// A fresh address: the range's granules and one unmapped after them. Under mu.
CUdeviceptr Fresh(Layout& l, size_t granules) {
  size_t bytes = (granules + 1) * l.granule;
  if (l.next + bytes > l.end) {
    size_t reserve = 1ull << 40;
    if (l.api.reserve(&l.next, reserve, l.granule, 0, 0) != CUDA_SUCCESS) {
      fprintf(stderr, "layout_floor: could not reserve address space\n");
      abort();
    }
    l.end = l.next + reserve;
  }
  CUdeviceptr at = l.next;
  l.next += bytes;
  return at;
}

// A range of `granules` mapped and opened at a fresh address, from an idle chunk or a new one.
Range MapRange(Layout& l, size_t granules) {
  Range r;
  r.granules = granules;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    auto& chunks = l.idle[granules];
    if (!chunks.empty()) {
      r.handle = chunks.back();
      chunks.pop_back();
    }
    r.at = Fresh(l, granules);
  }
  size_t bytes = granules * l.granule;
  if (r.handle == 0 && l.api.create(&r.handle, bytes, &l.prop, 0) != CUDA_SUCCESS) {
    fprintf(stderr, "layout_floor: cuMemCreate of %zu bytes failed\n", bytes);
    abort();
  }
  if (l.api.map(r.at, bytes, 0, r.handle, 0) != CUDA_SUCCESS ||
      l.api.set_access(r.at, bytes, &l.access, 1) != CUDA_SUCCESS) {
    fprintf(stderr, "layout_floor: mapping %zu bytes failed\n", bytes);
    abort();
  }
  return r;
}

// One pass, as the guard's background thread makes them: an event recorded
// on each stream after its new frees, freed ranges whose event completed
// unmapped or handed back in free order, then each size refilled to its target.
bool Pass(Layout& l) {
  bool did = false;
  std::vector<std::pair<CUstream, std::vector<size_t>>> fresh;  // frees without a fence, by stream
  {
    std::lock_guard<std::mutex> lock(l.mu);
    for (size_t i = 0; i < l.freed.size(); i++) {
      if (l.freed[i].fence != nullptr) continue;
      size_t k = 0;
      while (k < fresh.size() && fresh[k].first != l.freed[i].stream) k++;
      if (k == fresh.size()) fresh.push_back({l.freed[i].stream, {}});
      fresh[k].second.push_back(i);
    }
  }
  for (auto& [stream, which] : fresh) {  // only this thread takes frees off the front: indices hold
    Fence* fence = new Fence{nullptr, static_cast<int>(which.size())};
    {
      std::lock_guard<std::mutex> lock(l.mu);
      if (!l.events.empty()) {
        fence->event = l.events.back();
        l.events.pop_back();
      }
    }
    if (fence->event == nullptr) l.api.event_create(&fence->event, CU_EVENT_DISABLE_TIMING);
    l.api.event_record(fence->event, stream);
    std::lock_guard<std::mutex> lock(l.mu);
    for (size_t i : which) l.freed[i].fence = fence;
  }
  Fence* done = nullptr;  // the last fence seen complete
  for (;;) {
    Freed f;
    {
      std::lock_guard<std::mutex> lock(l.mu);
      if (l.freed.empty() || l.freed.front().fence == nullptr) break;
      f = l.freed.front();
    }
    if (f.fence != done) {
      if (l.api.event_query(f.fence->event) == CUDA_ERROR_NOT_READY) break;
      done = f.fence;
    }
    {
      std::lock_guard<std::mutex> lock(l.mu);
      l.freed.pop_front();
      if (--f.fence->refs == 0) {
        l.events.push_back(f.fence->event);
        delete f.fence;
        done = nullptr;
      }
      if (!f.unmap) {
        l.classes[f.range.granules].ready.push_back(f.range);
        l.recycled++;
        did = true;
        continue;
      }
    }
    l.api.unmap(f.range.at, f.range.granules * l.granule);
    std::lock_guard<std::mutex> lock(l.mu);
    l.idle[f.range.granules].push_back(f.range.handle);
    l.unmapped++;
    did = true;
  }
  for (;;) {
    size_t want = 0;
    {
      std::lock_guard<std::mutex> lock(l.mu);
      for (auto& [granules, c] : l.classes)
        if (c.ready.size() < c.target) {
          want = granules;
          break;
        }
    }
    if (want == 0) break;
    Range r = MapRange(l, want);
    std::lock_guard<std::mutex> lock(l.mu);
    l.classes[want].ready.push_back(r);
    l.mapped++;
    did = true;
  }
  return did;
}

void Run() {
  Layout& l = L();
  l.api.ctx_set(l.ctx);
  for (;;) {
    if (Pass(l)) continue;
    std::unique_lock<std::mutex> lock(l.mu);
    l.cv.wait_for(lock, std::chrono::microseconds(l.freed.empty() ? 5000 : 100));
  }
}

void Start(Layout& l, int device) {
  Api& a = l.api;
  a.create = DriverSymbol<decltype(a.create)>("cuMemCreate");
  a.map = DriverSymbol<decltype(a.map)>("cuMemMap");
  a.unmap = DriverSymbol<decltype(a.unmap)>("cuMemUnmap");
  a.set_access = DriverSymbol<decltype(a.set_access)>("cuMemSetAccess");
  a.reserve = DriverSymbol<decltype(a.reserve)>("cuMemAddressReserve");
  a.event_create = DriverSymbol<decltype(a.event_create)>("cuEventCreate");
  a.event_record = DriverSymbol<decltype(a.event_record)>("cuEventRecord");
  a.event_query = DriverSymbol<decltype(a.event_query)>("cuEventQuery");
  a.ctx_get = DriverSymbol<decltype(a.ctx_get)>("cuCtxGetCurrent");
  a.ctx_set = DriverSymbol<decltype(a.ctx_set)>("cuCtxSetCurrent");
  if (const char* s = getenv("FLOOR_SHARE")) l.share = atof(s);
  if (const char* s = getenv("LAYOUT_ALIGN")) l.align = strtoull(s, nullptr, 10);
  if (l.align == 0 || (l.align & (l.align - 1)) != 0) {
    fprintf(stderr, "layout_floor: LAYOUT_ALIGN=%s is not a power of two\n", getenv("LAYOUT_ALIGN"));
    abort();
  }
  a.ctx_get(&l.ctx);
  l.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  l.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  l.prop.location.id = device;
  l.access.location = l.prop.location;
  l.access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  DriverSymbol<CUresult (*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)>(
      "cuMemGetAllocationGranularity")(&l.granule, &l.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  std::thread(Run).detach();
  atexit([] {
    Layout& l = L();
    fprintf(stderr, "layout floor: %llu mapped ahead, %llu mapped inline, %llu unmapped, %llu recycled\n", l.mapped,
            l.inline_maps, l.unmapped, l.recycled);
  });
  l.started = true;
}

}  // namespace

extern "C" void* layout_alloc(ssize_t size, int device, void*) {
  Layout& l = L();
  size_t bytes = size > 0 ? static_cast<size_t>(size) : 1;
  Range r;
  bool wake;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    if (!l.started) Start(l, device);
    size_t granules = (bytes + l.granule - 1) / l.granule;
    Class& c = l.classes[granules];
    if (!c.ready.empty()) {
      r = c.ready.front();
      c.ready.erase(c.ready.begin());
    } else {
      if (c.target < 64) c.target *= 2;  // a miss: keep more of this size ready
      r.granules = granules;
    }
    wake = c.ready.size() < c.target;
  }
  if (wake) l.cv.notify_one();
  if (r.at == 0) {
    r = MapRange(l, r.granules);
    std::lock_guard<std::mutex> lock(l.mu);
    l.inline_maps++;
  }
  // The end against the unmapped granule after the range, the pointer LAYOUT_ALIGN-aligned.
  CUdeviceptr user = r.at + r.granules * l.granule - ((bytes + l.align - 1) & ~(l.align - 1));
  std::lock_guard<std::mutex> lock(l.mu);
  l.live[user] = r;
  return reinterpret_cast<void*>(user);
}

extern "C" void layout_free(void* ptr, ssize_t, int, void* stream) {
  Layout& l = L();
  Freed f;
  bool wake;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    auto it = l.live.find(reinterpret_cast<CUdeviceptr>(ptr));
    if (it == l.live.end()) return;
    f.range = it->second;
    l.live.erase(it);
    f.stream = static_cast<CUstream>(stream);
    f.fence = nullptr;  // the background thread records one after the memory's last use
    l.owed += l.share;
    f.unmap = l.owed >= 1;
    if (f.unmap) l.owed -= 1;
    wake = l.freed.empty();  // else the background thread polls them within 100 us anyway
    l.freed.push_back(f);
  }
  if (wake) l.cv.notify_one();
}
