#ifndef MATE_DEVICE_DEVICE_ALLOCATOR_INTERNAL_H_
#define MATE_DEVICE_DEVICE_ALLOCATOR_INTERNAL_H_

// The device allocator's own records and constants, shared by the files
// that implement it (one job each): device_allocator.cc (the calls:
// allocate, record a stream, stats, shutdown), device_free.cc (a free: bad
// frees, bookkeeping, the record_stream rule, fencing), device_ranges.cc
// (address ranges and physical chunks), device_ready_pool.cc (ranges
// mapped ahead), device_quarantine.cc (the background thread: fences,
// pending frees, quarantine), device_canary.cc (canary windows),
// device_memory_pressure.cc (out of memory: give back, retry, report) and
// device_peers.cc (access for the process's other GPUs) and device_ipc.cc
// (a live allocation shared with another process).
#include <sys/mman.h>

#include <chrono>

#include "device/allocator/device_allocator.h"
#include "device/driver/now.h"

namespace mate {
namespace device {

using cuda::CUdeviceptr;
using cuda::CUmemGenericAllocationHandle;
using cuda::CUresult;
using cuda::CUstream;

constexpr uint32_t kMaxBlocks = 8;
constexpr uint32_t kMaxStreams = 4;  // streams declared with RecordStream, per allocation
constexpr uint32_t kMaxUses = 4;     // streams whose kernels used an allocation, per allocation
constexpr uint32_t kMaxWaits = kMaxStreams + kMaxUses;
constexpr uint32_t kPrepareBatch = 8;
// While frees wait, the background thread maps at most this many ranges
// before it turns to them again: each mapping is ~40 us of driver time, and
// a freed range that is recycled (recycle_when_behind) or unmapped is held
// back by every mapping queued ahead of it.
constexpr uint32_t kPrepareBatchWhileFreeing = 2;
constexpr uint64_t kMaxPreparedGranules = 256;  // larger classes are always mapped on demand
constexpr uint8_t kCanaryFill = kCanaryByte;

enum Phase : uint8_t {
  kRangeFree = 0,    // address range unused (or reusable after quarantine)
  kPreparing = 1,    // being mapped ahead by the background thread
  kReady = 2,        // mapped, canary-filled, waiting for a request
  kLive = 3,         // handed out
  kFreeing = 4,      // freed; canary check and unmap pending on its stream
  kQuarantined = 5,  // unmapped: stale pointers fault
};

inline uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

constexpr uint64_t kFilledForClass = ~0ull;

inline void* MapTable(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Makes `ctx` current on this thread if it has no context; our calls on a
// caller's stream run in the caller's context otherwise.
inline void EnsureContext(const cuda::Driver* drv, cuda::CUcontext ctx) {
  cuda::CUcontext cur = nullptr;
  if (drv->cuCtxGetCurrent(&cur) != cuda::kSuccess || cur == nullptr) drv->cuCtxSetCurrent(ctx);
}

// Makes `ctx` current on this thread for a scope (the guard's own driver
// calls on its device), and the caller's context current again after.
class InContext {
 public:
  InContext(const cuda::Driver* drv, cuda::CUcontext ctx) : drv_(drv), ctx_(ctx) {
    drv_->cuCtxGetCurrent(&saved_);
    drv_->cuCtxSetCurrent(ctx_);
  }
  ~InContext() {
    if (saved_ != nullptr && saved_ != ctx_) drv_->cuCtxSetCurrent(saved_);
  }
  InContext(const InContext&) = delete;
  InContext& operator=(const InContext&) = delete;

 private:
  const cuda::Driver* drv_;
  cuda::CUcontext ctx_;
  cuda::CUcontext saved_ = nullptr;
};

struct DeviceAllocator::Slot {
  SlotRecord rec;  // the host record; data_pages counts granules here
  CUmemGenericAllocationHandle chunk;
  uint32_t total_granules;  // data + guard: fixed for the range
  uint8_t phase;
  uint8_t mapped;
  uint8_t exported;  // its chunk was shared with another process: released at free, never reused
  // Which canary bytes hold the canary now: kFilledForClass (where a
  // window of any size of its class can lie), the size + 1 it was filled
  // for (mapped ahead for that size, or last checked clean at it when
  // recycled), or 0 (unknown: fill at allocation).
  uint64_t filled;
  uint8_t n_streams;
  uint8_t streams_overflow;
  CUstream alloc_stream;
  CUstream streams[kMaxStreams];  // other streams declared with RecordStream
  // Kernels that used it (launch tracking): the last use per stream.
  uint8_t n_uses;
  uint8_t uses_overflow;
  StreamUse uses[kMaxUses];
};

struct DeviceAllocator::Block {
  CUdeviceptr base;
  uint64_t granules;
  uint64_t next;  // bump pointer, in granules
  uint32_t* map;  // granule -> slot index
};

// An event recorded on a stream after the last use of one or more freed
// allocations: the frees of one stream between two background passes share
// one (work on a stream completes in order).
struct DeviceAllocator::Fence {
  cuda::CUevent event;
  uint32_t refs;
  bool done;
};

struct DeviceAllocator::Pending {
  uint32_t slot;
  uint32_t readback;
  Fence* fence;        // null until the background thread records one
  CUstream stream;     // the freeing stream (or order_stream_ after waits on several)
  bool check;          // canary bytes are still to be checked
  bool copied;         // ... and were read back in stream order already
  bool checked_clean;  // checked at free (syncOnFree); damage found is in rec.canary_reported
};

// What a free waits for: streams declared with RecordStream (and those of
// uses it was not ordered after), and the uses launch tracking saw.
struct DeviceAllocator::FreeWaits {
  CUstream used[kMaxWaits];
  uint32_t n_used = 0;
  bool overflow = false;
  StreamUse uses[kMaxUses];
  uint32_t n_uses = 0;
};

// The per-thread default stream handle names the calling thread's stream:
// only the freeing thread can record after its work.
inline bool CallerOnly(CUstream s) { return reinterpret_cast<uintptr_t>(s) == 0x2; }

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_ALLOCATOR_INTERNAL_H_
