// The least driver work a quarantine that unmaps freed device memory adds:
// bench/cuda/null_allocator.cc's blocks, and for a share of the frees (the
// share of ranges the guard unmaps rather than recycles; FLOOR_SHARE, 0.57
// by default: the reference loop's 24,397 allocations, ~10,500 recycled)
// one cycle on a background thread: a physical chunk of the freed size's
// granules unmapped from where it was, mapped at a fresh address and opened
// for the device (cuMemUnmap, cuMemMap, cuMemSetAccess), as the guard's
// background thread does per unmapped range. No canaries, fences, tracking
// or bookkeeping: loop_py.sh's `pluggable-floor` variant, the driver traffic
// under any guard that makes a stale device pointer fault. FLOOR_FENCES=1
// (`pluggable-floor-fences`): each batch of cycles first waits for an event
// recorded on the freeing streams, as the guard's fences do, to tell the
// fences' cost from the layout's (layout_floor.cc).
// Built with null_allocator.cc by null_pluggable.py (needs cuda.h).
#include <cuda.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" void* null_alloc(ssize_t size, int device, void* stream);
extern "C" void null_free(void* ptr, ssize_t size, int device, void* stream);

#include "driver_symbol.h"

namespace {

struct Floor {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<size_t, CUstream>> cycles;  // freed sizes (and their streams) waiting for their cycle
  bool fences = false;
  double share = 0.57, owed = 0;
  unsigned long long asked = 0, done = 0;  // cycles, printed at exit
  bool started = false;
  CUcontext ctx = nullptr;
  int device = 0;
  // The background thread's own: one chunk per granule count, where it is mapped now.
  struct Chunk {
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr at = 0;
  };
  std::unordered_map<size_t, Chunk> chunks;
  CUdeviceptr base = 0, next = 0, end = 0;
  size_t granule = 0;
};

Floor& F() {
  static Floor* f = new Floor();  // never destroyed: frees may come during exit
  return *f;
}

// Fresh addresses, a granule left unmapped after each range (as the guard's
// layout), wrapping round a 64 GiB reservation: by then its ranges are long unmapped.
CUdeviceptr NextAddress(Floor& f, size_t granules) {
  size_t bytes = (granules + 1) * f.granule;
  if (f.next + bytes > f.end) f.next = f.base;
  CUdeviceptr at = f.next;
  f.next += bytes;
  return at;
}

void Cycle(Floor& f, size_t size) {
  static auto create =
      DriverSymbol<CUresult (*)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long)>(
          "cuMemCreate");
  static auto map =
      DriverSymbol<CUresult (*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)>(
          "cuMemMap");
  static auto unmap = DriverSymbol<CUresult (*)(CUdeviceptr, size_t)>("cuMemUnmap");
  static auto set_access =
      DriverSymbol<CUresult (*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t)>("cuMemSetAccess");
  size_t granules = (size + f.granule - 1) / f.granule;
  if (granules == 0) granules = 1;
  size_t bytes = granules * f.granule;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = f.device;
  Floor::Chunk& c = f.chunks[granules];
  if (c.handle == 0 && create(&c.handle, bytes, &prop, 0) != CUDA_SUCCESS) {
    fprintf(stderr, "quarantine_floor: cuMemCreate of %zu bytes failed\n", bytes);
    abort();
  }
  if (c.at != 0) unmap(c.at, bytes);
  c.at = NextAddress(f, granules);
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (map(c.at, bytes, 0, c.handle, 0) != CUDA_SUCCESS || set_access(c.at, bytes, &access, 1) != CUDA_SUCCESS) {
    fprintf(stderr, "quarantine_floor: mapping %zu bytes failed\n", bytes);
    abort();
  }
}

// FLOOR_FENCES: an event on each stream of the batch, recorded from this
// thread and polled every 100 us until done, as the guard's fences are.
void Fence(const std::deque<std::pair<size_t, CUstream>>& batch) {
  static auto create = DriverSymbol<CUresult (*)(CUevent*, unsigned int)>("cuEventCreate");
  static auto record = DriverSymbol<CUresult (*)(CUevent, CUstream)>("cuEventRecord");
  static auto query = DriverSymbol<CUresult (*)(CUevent)>("cuEventQuery");
  static std::vector<CUevent> pool;
  std::vector<CUstream> streams;
  for (auto& [size, stream] : batch)
    if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
  while (pool.size() < streams.size()) {
    CUevent e;
    create(&e, CU_EVENT_DISABLE_TIMING);
    pool.push_back(e);
  }
  for (size_t i = 0; i < streams.size(); i++) record(pool[i], streams[i]);
  for (size_t i = 0; i < streams.size(); i++)
    while (query(pool[i]) == CUDA_ERROR_NOT_READY) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

void Run() {
  Floor& f = F();
  DriverSymbol<CUresult (*)(CUcontext)>("cuCtxSetCurrent")(f.ctx);
  for (;;) {
    std::deque<std::pair<size_t, CUstream>> batch;
    {
      std::unique_lock<std::mutex> lock(f.mu);
      f.cv.wait(lock, [&] { return !f.cycles.empty(); });
      if (f.fences) {
        batch.swap(f.cycles);
      } else {
        batch.push_back(f.cycles.front());
        f.cycles.pop_front();
      }
    }
    if (f.fences) Fence(batch);
    for (auto& [size, stream] : batch) {
      Cycle(f, size);
      __atomic_add_fetch(&f.done, 1, __ATOMIC_RELAXED);
    }
  }
}

void Start(Floor& f, int device) {
  f.device = device;
  if (const char* s = getenv("FLOOR_SHARE")) f.share = atof(s);
  f.fences = getenv("FLOOR_FENCES") != nullptr && strcmp(getenv("FLOOR_FENCES"), "0") != 0;
  DriverSymbol<CUresult (*)(CUcontext*)>("cuCtxGetCurrent")(&f.ctx);
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  DriverSymbol<CUresult (*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)>(
      "cuMemGetAllocationGranularity")(&f.granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  size_t reserve = 64ull << 30;
  if (DriverSymbol<CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)>("cuMemAddressReserve")(
          &f.base, reserve, f.granule, 0, 0) != CUDA_SUCCESS) {
    fprintf(stderr, "quarantine_floor: could not reserve address space\n");
    abort();
  }
  f.next = f.base;
  f.end = f.base + reserve;
  std::thread(Run).detach();
  atexit([] {
    fprintf(stderr, "quarantine floor: %llu cycles asked, %llu done\n", F().asked,
            __atomic_load_n(&F().done, __ATOMIC_RELAXED));
  });
  f.started = true;
}

}  // namespace

extern "C" void* floor_alloc(ssize_t size, int device, void* stream) {
  Floor& f = F();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.started) Start(f, device);
  }
  return null_alloc(size, device, stream);
}

extern "C" void floor_free(void* ptr, ssize_t size, int device, void* stream) {
  null_free(ptr, size, device, stream);
  Floor& f = F();
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(f.mu);
    f.owed += f.share;
    if (f.owed >= 1) {
      f.owed -= 1;
      f.asked++;
      f.cycles.push_back({static_cast<size_t>(size), static_cast<CUstream>(stream)});
      wake = true;
    }
  }
  if (wake) f.cv.notify_one();
}
