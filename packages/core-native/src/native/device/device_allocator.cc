#include "device/device_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>

#include "core/alloc_log.h"
#include "core/process_state.h"
#include "device/device_guard.h"
#include "device/launch_tracker.h"

namespace mate {
namespace device {

using cuda::CUdeviceptr;
using cuda::CUmemGenericAllocationHandle;
using cuda::CUresult;
using cuda::CUstream;

namespace {
constexpr uint32_t kMaxBlocks = 8;
constexpr uint32_t kMaxStreams = 4;   // streams declared with RecordStream, per allocation
constexpr uint32_t kMaxUses = 4;      // streams whose kernels used an allocation, per allocation
constexpr uint32_t kMaxWaits = kMaxStreams + kMaxUses;
constexpr uint32_t kPrepareBatch = 8;
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

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

constexpr uint64_t kFilledWhole = ~0ull;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
}

void* MapTable(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Makes `ctx` current on this thread if it has no context; our calls on a
// caller's stream run in the caller's context otherwise.
void EnsureContext(const cuda::Driver* drv, cuda::CUcontext ctx) {
  cuda::CUcontext cur = nullptr;
  if (drv->cuCtxGetCurrent(&cur) != cuda::kSuccess || cur == nullptr) drv->cuCtxSetCurrent(ctx);
}
}  // namespace

struct DeviceAllocator::Slot {
  SlotRecord rec;  // the host record; data_pages counts granules here
  CUmemGenericAllocationHandle chunk;
  uint32_t total_granules;  // data + guard: fixed for the range
  uint8_t phase;
  uint8_t mapped;
  // Which canary bytes hold the canary now: kFilledWhole (the whole data
  // range), the size + 1 of the allocation whose windows were last checked
  // clean (a recycled range), or 0 (unknown: fill at allocation).
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
  Fence* fence;     // null until the background thread records one
  CUstream stream;  // the freeing stream (or order_stream_ after waits on several)
  bool check;       // canary bytes are still to be checked
  bool copied;      // ... and were read back in stream order already
  bool checked_clean;  // checked at free (syncOnFree) and intact
};

namespace {
// The per-thread default stream handle names the calling thread's stream:
// only the freeing thread can record after its work.
bool CallerOnly(CUstream s) { return reinterpret_cast<uintptr_t>(s) == 0x2; }
}  // namespace

DeviceAllocator::Fence* DeviceAllocator::NewFence(uint32_t refs) {
  cuda::CUevent ev = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!events_.empty()) {
      ev = events_.back();
      events_.pop_back();
    }
  }
  if (ev == nullptr && drv_->cuEventCreate(&ev, cuda::kEventDisableTiming) != cuda::kSuccess) return nullptr;
  return new Fence{ev, refs, false};
}

void DeviceAllocator::DropFence(Fence* f) {  // under mu_
  if (f == nullptr || --f->refs > 0) return;
  events_.push_back(f->event);
  delete f;
}

DeviceAllocator* DeviceAllocator::Create(const cuda::Driver* drv, int ordinal, const DeviceConfig& config,
                                         EventSink* sink, std::string* error) {
  auto* a = new DeviceAllocator(drv, ordinal, config, sink);
  if (!a->Init(error)) return nullptr;  // leaked on purpose: a half-made allocator may own driver objects
  return a;
}

DeviceAllocator::DeviceAllocator(const cuda::Driver* drv, int ordinal, const DeviceConfig& config, EventSink* sink)
    : drv_(drv), ordinal_(ordinal), config_(config), sink_(sink) {}

bool DeviceAllocator::Init(std::string* error) {
  InternalCalls internal;
  auto fail = [&](const char* what, CUresult r) {
    *error = std::string(what) + ": " + cuda::ErrorName(r) + " (" + cuda::ErrorText(r) + ")";
    return false;
  };
  CUresult r = drv_->cuDeviceGet(&dev_, ordinal_);
  if (r != cuda::kSuccess) return fail("cuDeviceGet", r);
  int vmm = 0;
  drv_->cuDeviceGetAttribute(&vmm, cuda::kDeviceAttributeVmmSupported, dev_);
  if (!vmm) {
    *error = "device " + std::to_string(ordinal_) + " does not support CUDA virtual memory management";
    return false;
  }
  if ((r = drv_->cuDevicePrimaryCtxRetain(&ctx_, dev_)) != cuda::kSuccess) return fail("cuDevicePrimaryCtxRetain", r);
  EnsureContext(drv_, ctx_);
  cuda::CUcontext saved = nullptr;
  drv_->cuCtxGetCurrent(&saved);
  drv_->cuCtxSetCurrent(ctx_);
  prop_.type = cuda::kMemAllocationTypePinned;
  prop_.location.type = cuda::kMemLocationTypeDevice;
  prop_.location.id = dev_;
  access_.location = prop_.location;
  access_.flags = cuda::kMemAccessProtReadWrite;
  size_t gran = 0;
  r = drv_->cuMemGetAllocationGranularity(&gran, &prop_, cuda::kMemAllocGranularityMinimum);
  if (r != cuda::kSuccess || gran == 0) return fail("cuMemGetAllocationGranularity", r);
  granule_ = gran;
  stats_.granule = gran;
  uint64_t per_block = std::max<uint64_t>(config_.reserve_bytes / granule_, 64);
  max_slots_ = static_cast<uint32_t>(std::min<uint64_t>(per_block * kMaxBlocks, 0xFFFFFFF0u));
  slots_ = static_cast<Slot*>(MapTable(static_cast<size_t>(max_slots_) * sizeof(Slot)));
  if (slots_ == nullptr) {
    *error = "could not map the device allocator's tables";
    return false;
  }
  blocks_.assign(kMaxBlocks, nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (AcquireRange(0) == 0) {  // reserves the first block; the range goes straight back
      *error = "could not reserve GPU address space (cuMemAddressReserve)";
      return false;
    }
    ReleaseRange(slot_count_);
  }
  if ((r = drv_->cuStreamCreate(&prep_stream_, cuda::kStreamNonBlocking)) != cuda::kSuccess) return fail("cuStreamCreate", r);
  if ((r = drv_->cuStreamCreate(&order_stream_, cuda::kStreamNonBlocking)) != cuda::kSuccess) return fail("cuStreamCreate", r);
  void* host = nullptr;
  if ((r = drv_->cuMemAllocHost(&host, kReadbackSlots * kReadbackBytes)) != cuda::kSuccess) return fail("cuMemAllocHost", r);
  readback_ = static_cast<uint8_t*>(host);
  for (uint32_t i = 0; i < kReadbackSlots; i++) readback_slots_.push_back(kReadbackSlots - 1 - i);
  for (int i = 0; i < 64; i++) {
    cuda::CUevent ev = nullptr;
    if (drv_->cuEventCreate(&ev, cuda::kEventDisableTiming) == cuda::kSuccess) events_.push_back(ev);
  }
  if (saved != nullptr) drv_->cuCtxSetCurrent(saved);
  thread_ = std::thread([this] { Run(); });
  return true;
}

uint32_t DeviceAllocator::DataGranulesFor(size_t size) const {
  if (size == 0) return 0;
  uint64_t used = config_.tail_mode ? RoundUp(size, config_.alignment) : size;
  return static_cast<uint32_t>((used + granule_ - 1) / granule_);
}

DeviceAllocator::Slot* DeviceAllocator::SlotOf(uint32_t index) const { return &slots_[index]; }

bool DeviceAllocator::InBlocks(CUdeviceptr ptr) const {
  uint32_t n = __atomic_load_n(&block_count_, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const Block* b = blocks_[i];
    if (ptr >= b->base && ptr < b->base + b->granules * granule_) return true;
  }
  return false;
}

bool DeviceAllocator::Owns(CUdeviceptr ptr) const { return InBlocks(ptr); }

uint32_t DeviceAllocator::Lookup(CUdeviceptr ptr) const {
  uint32_t n = __atomic_load_n(&block_count_, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const Block* b = blocks_[i];
    if (ptr >= b->base && ptr < b->base + b->granules * granule_)
      return __atomic_load_n(&b->map[(ptr - b->base) / granule_], __ATOMIC_ACQUIRE);
  }
  return 0;
}

uint32_t DeviceAllocator::AcquireRange(uint32_t data_granules) {
  uint32_t total = data_granules + 1;
  auto it = free_ranges_.find(total);
  if (it != free_ranges_.end() && !it->second.empty()) {
    uint32_t idx = it->second.back();
    it->second.pop_back();
    return idx;
  }
  Block* b = block_count_ ? blocks_[block_count_ - 1] : nullptr;
  if (b == nullptr || b->next + total > b->granules) {
    if (block_count_ == kMaxBlocks) return 0;
    // Address space only: no memory. Rare (a block is 1 TiB), so under the lock.
    uint64_t bytes = std::max<uint64_t>(RoundUp(config_.reserve_bytes, granule_), (total + 1) * granule_);
    CUdeviceptr base = 0;
    while (drv_->cuMemAddressReserve(&base, bytes, granule_, 0, 0) != cuda::kSuccess) {
      if (bytes / 2 < (total + 1) * granule_ || bytes / 2 < (64ull << 20)) return 0;
      bytes = RoundUp(bytes / 2, granule_);
    }
    auto* nb = new Block{base, bytes / granule_, 0, static_cast<uint32_t*>(MapTable((bytes / granule_) * sizeof(uint32_t)))};
    if (nb->map == nullptr) return 0;
    blocks_[block_count_] = nb;
    __atomic_store_n(&block_count_, block_count_ + 1, __ATOMIC_RELEASE);
    WidenGuardedRange(base, base + bytes);
    b = nb;
  }
  if (slot_count_ + 1 >= max_slots_) return 0;
  uint32_t idx = ++slot_count_;
  Slot* s = SlotOf(idx);
  s->rec.slot_start = b->base + b->next * granule_;
  s->rec.data_pages = total - 1;
  // The mode fixes where data and guard lie in the range: set before mapping.
  s->rec.mode = config_.tail_mode ? Mode::kTail : Mode::kHead;
  s->total_granules = total;
  for (uint64_t g = 0; g < total; g++) __atomic_store_n(&b->map[b->next + g], idx, __ATOMIC_RELEASE);
  b->next += total;
  return idx;
}

void DeviceAllocator::ReleaseRange(uint32_t index) {
  Slot* s = SlotOf(index);
  s->phase = kRangeFree;
  if (LoadState(s->rec) == SlotState::kQuarantined) StoreState(&s->rec, SlotState::kReusable);
  free_ranges_[s->total_granules].push_back(index);
}

bool DeviceAllocator::TakeIdleChunk(uint32_t granules, CUmemGenericAllocationHandle* out) {
  auto it = idle_chunks_.find(granules);
  if (it == idle_chunks_.end() || it->second.empty()) return false;
  *out = it->second.back();
  it->second.pop_back();
  idle_bytes_ -= granules * granule_;
  return true;
}

void DeviceAllocator::Quarantine(uint32_t index) {
  Slot* s = SlotOf(index);
  s->phase = kQuarantined;
  quarantine_.push_back(index);
  stats_.quarantined++;
  stats_.quarantined_bytes += s->total_granules * granule_;
  while (!quarantine_.empty() && (stats_.quarantined > config_.quarantine_max_count ||
                                  stats_.quarantined_bytes > config_.quarantine_max_bytes)) {
    uint32_t old = quarantine_.front();
    quarantine_.pop_front();
    stats_.quarantined--;
    stats_.quarantined_bytes -= SlotOf(old)->total_granules * granule_;
    ReleaseRange(old);  // still unmapped; its history stays until reused
  }
}

CUresult DeviceAllocator::CreateChunk(uint32_t granules, CUmemGenericAllocationHandle* out) {
  CUresult r = drv_->cuMemCreate(out, granules * granule_, &prop_, 0);
  if (r == cuda::kErrorOutOfMemory) {
    // Give back the pool's idle chunks and the ready slots' memory, then retry once.
    std::vector<std::pair<uint32_t, CUmemGenericAllocationHandle>> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [g, v] : idle_chunks_)
        for (auto h : v) drop.emplace_back(g, h);
      idle_chunks_.clear();
      idle_bytes_ = 0;
      for (auto& [g, c] : classes_) c.target = 0;
    }
    for (auto& [g, h] : drop) drv_->cuMemRelease(h);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [g, h] : drop) stats_.physical_bytes -= g * granule_;
    }
    r = drv_->cuMemCreate(out, granules * granule_, &prop_, 0);
  }
  if (r == cuda::kSuccess) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.chunks_created++;
    stats_.physical_bytes += granules * granule_;
  }
  return r;
}

void DeviceAllocator::RetireChunk(uint32_t granules, CUmemGenericAllocationHandle chunk) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_bytes_ + granules * granule_ <= config_.idle_chunk_bytes) {
      idle_chunks_[granules].push_back(chunk);
      idle_bytes_ += granules * granule_;
      return;
    }
    stats_.physical_bytes -= granules * granule_;
  }
  drv_->cuMemRelease(chunk);
}

CUresult DeviceAllocator::MapSlot(uint32_t index, uint32_t data_granules, CUmemGenericAllocationHandle chunk) {
  Slot* s = SlotOf(index);
  SlotGeometry g = GeometryOf(s->rec, granule_);
  size_t bytes = data_granules * granule_;
  CUresult r = drv_->cuMemMap(g.data_start, bytes, 0, chunk, 0);
  if (r != cuda::kSuccess) return r;
  r = drv_->cuMemSetAccess(g.data_start, bytes, &access_, 1);
  if (r != cuda::kSuccess) {
    drv_->cuMemUnmap(g.data_start, bytes);
    return r;
  }
  s->chunk = chunk;
  s->mapped = 1;
  return cuda::kSuccess;
}

void DeviceAllocator::PlaceUser(Slot* s, size_t size) const {
  s->rec.size = size;
  s->rec.mode = config_.tail_mode ? Mode::kTail : Mode::kHead;
  s->rec.alignment = static_cast<uint16_t>(config_.alignment);
  SlotGeometry g = GeometryOf(s->rec, granule_);
  s->rec.user = size == 0 ? g.guard_start
                : (config_.tail_mode ? (g.guard_start - size) & ~(static_cast<uintptr_t>(config_.alignment) - 1)
                                     : g.data_start);
}

void DeviceAllocator::FillWindows(const SlotRecord& r, CUstream stream) {
  SlotGeometry g = Geometry(r);
  if (g.canary_before_end > g.canary_before_start)
    drv_->cuMemsetD8Async(g.canary_before_start, kCanaryFill, g.canary_before_end - g.canary_before_start, stream);
  if (g.canary_after_end > g.canary_after_start)
    drv_->cuMemsetD8Async(g.canary_after_start, kCanaryFill, g.canary_after_end - g.canary_after_start, stream);
}

// The checked canary bytes into `rb`: those before the start first, then
// those after the end (the layout CheckCanary reads).
CUresult DeviceAllocator::ReadWindows(const SlotRecord& r, uint8_t* rb, CUstream stream) {
  SlotGeometry g = Geometry(r);
  size_t lb = g.canary_before_end - g.canary_before_start;
  size_t la = g.canary_after_end - g.canary_after_start;
  CUresult res = cuda::kSuccess;
  if (lb) res = drv_->cuMemcpyDtoHAsync(rb, g.canary_before_start, lb, stream);
  if (res == cuda::kSuccess && la) res = drv_->cuMemcpyDtoHAsync(rb + lb, g.canary_after_start, la, stream);
  return res;
}

SlotGeometry DeviceAllocator::Geometry(const SlotRecord& r) const {
  SlotGeometry g = GeometryOf(r, granule_);
  uint64_t w = std::min<uint64_t>(config_.canary_window, kReadbackBytes / 2);
  if (g.canary_before_end - g.canary_before_start > w) g.canary_before_start = g.canary_before_end - w;
  if (g.canary_after_end - g.canary_after_start > w) g.canary_after_end = g.canary_after_start + w;
  return g;
}

uint32_t DeviceAllocator::PrepareInline(uint32_t n, size_t size, CUstream stream, const char** reason) {
  InternalCalls internal;
  uint32_t idx;
  CUmemGenericAllocationHandle chunk = 0;
  bool have;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idx = AcquireRange(n);
    if (idx == 0) {
      *reason = "the guarded GPU address space is full";
      return 0;
    }
    SlotOf(idx)->phase = kPreparing;
    have = TakeIdleChunk(n, &chunk);
  }
  EnsureContext(drv_, ctx_);
  CUresult r = have ? cuda::kSuccess : CreateChunk(n, &chunk);
  if (r == cuda::kSuccess) {
    r = MapSlot(idx, n, chunk);
    if (r != cuda::kSuccess) RetireChunk(n, chunk);
  }
  if (r != cuda::kSuccess) {
    if (cuda::IsSticky(r)) NoteBroken(r, "mapping a guarded allocation");
    *reason = r == cuda::kErrorOutOfMemory
                  ? "the GPU ran short of memory for guarded allocations (each holds at least one 2 MiB granule)"
                  : "mapping a guarded range failed (cuMemMap/cuMemSetAccess)";
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseRange(idx);
    return 0;
  }
  Slot* s = SlotOf(idx);
  PlaceUser(s, size);
  // Only the checked canary bytes are filled, in stream order before any
  // work the caller queues after this allocation.
  FillWindows(s->rec, stream);
  s->filled = size + 1;
  return idx;
}

CUresult DeviceAllocator::Fallback(size_t size, const char* reason, CUdeviceptr* out) {
  InternalCalls internal;
  EnsureContext(drv_, ctx_);
  CUresult r = drv_->cuMemAlloc(out, size ? size : 1);
  if (r != cuda::kSuccess) {
    *out = 0;
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.fallbacks++;
    stats_.last_fallback_reason = reason;
  }
  if (config_.log_allocations) LogUnguarded(*out, size, reason, "cuda", CurrentTestId());
  return cuda::kSuccess;
}

CUresult DeviceAllocator::Allocate(size_t size, CUstream stream, uint32_t stack_id, CUdeviceptr* out, bool* guarded) {
  uint64_t t0 = NowNs();
  *out = 0;
  *guarded = false;
  if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) return cuda::kErrorIllegalAddress;
  if (shut_down_) return Fallback(size, "the device guard had shut down (process exit)", out);
  uint64_t max_data = (1ull << 31);
  if (size / granule_ >= max_data) return Fallback(size, "the allocation is larger than a guarded range can be", out);
  uint32_t n = DataGranulesFor(size);
  uint32_t idx = 0;
  bool wake = false;
  if (n > 0 && n <= kMaxPreparedGranules) {
    std::lock_guard<std::mutex> lock(mu_);
    ClassState& c = classes_[n];
    uint32_t cap = static_cast<uint32_t>(std::clamp<uint64_t>(
        config_.prepare_budget_bytes / (n * granule_) / 4, 1, config_.prepare_ahead));
    if (!c.ready.empty()) {
      idx = c.ready.front();
      c.ready.pop_front();
      ready_bytes_ -= n * granule_;
      stats_.ready_hits++;
      if (c.ready.empty() && c.preparing > 0) c.starved_ns = t0;
    } else {
      // A miss: keep more of this size ready from now on. Not the first
      // request of a size: the background thread is falling behind.
      if (c.target > 0) c.starved_ns = t0;
      c.target = std::min<uint32_t>(c.target ? c.target * 2 : 4, cap);
      stats_.ready_misses++;
    }
    wake = c.ready.size() + c.preparing < c.target;
  }
  if (wake) wake_.notify_one();
  const char* reason = nullptr;
  if (idx == 0) {
    if (n == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      idx = AcquireRange(0);  // zero bytes: a bare guard, no memory
      if (idx == 0) reason = "the guarded GPU address space is full";
    } else {
      idx = PrepareInline(n, size, stream, &reason);
    }
    if (idx == 0) return Fallback(size, reason, out);
  }
  Slot* s = SlotOf(idx);
  PlaceUser(s, size);
  if (s->filled != kFilledWhole && s->filled != size + 1 && size != 0) {
    // A recycled range last used at another size: fill this size's windows,
    // in stream order before the caller's work.
    InternalCalls internal;
    EnsureContext(drv_, ctx_);
    FillWindows(s->rec, stream);
  }
  s->filled = 0;  // live: the caller may damage it
  SlotRecord& r = s->rec;
  r.alloc_id = NextAllocationId();
  r.alloc_stack = stack_id;
  r.alloc_test = CurrentTestId();
  r.free_stack = 0;
  r.free_test = 0;
  r.freed_by = FreedBy::kNotFreed;
  r.canary_reported = 0;
  s->alloc_stream = stream;
  s->n_streams = 0;
  s->streams_overflow = 0;
  s->n_uses = 0;
  s->uses_overflow = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s->phase = kLive;
    StoreState(&r, SlotState::kLive);
    stats_.allocations++;
    stats_.live++;
    stats_.live_bytes += size;
    stats_.live_granules += n;
    stats_.peak_live = std::max(stats_.peak_live, stats_.live);
    stats_.alloc_ns += NowNs() - t0;
  }
  if (config_.log_allocations)
    LogAlloc(r.alloc_id, r.user, size, static_cast<uint64_t>(s->total_granules) * granule_, r.mode, "cuda", r.alloc_test);
  *out = r.user;
  *guarded = true;
  return cuda::kSuccess;
}

bool DeviceAllocator::NoteArg(CUdeviceptr ptr, const StreamUse& use, ArgRef* out) {
  uint32_t idx = Lookup(ptr);
  if (idx == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = SlotOf(idx);
  if (LoadState(s->rec) == SlotState::kNever) return false;
  out->value = ptr;
  out->alloc_id = s->rec.alloc_id;
  out->user = s->rec.user;
  out->size = s->rec.size;
  out->slot = idx;
  out->device = static_cast<uint8_t>(ordinal_);
  out->mode = static_cast<uint8_t>(s->rec.mode);
  out->freed = s->phase != kLive;
  if (s->phase != kLive) return true;
  for (uint32_t i = 0; i < s->n_uses; i++) {
    if (s->uses[i].stream != use.stream) continue;
    s->uses[i] = use;
    return true;
  }
  if (s->n_uses < kMaxUses) s->uses[s->n_uses++] = use;
  else s->uses_overflow = 1;
  return true;
}

bool DeviceAllocator::RecordOf(uint32_t slot, uint64_t alloc_id, SlotRecord* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot == 0 || slot > slot_count_ || SlotOf(slot)->rec.alloc_id != alloc_id) return false;
  *out = SlotOf(slot)->rec;
  return true;
}

bool DeviceAllocator::RecordStream(CUdeviceptr ptr, CUstream stream) {
  uint32_t idx = Lookup(ptr);
  if (idx == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = SlotOf(idx);
  if (s->phase != kLive || ptr < s->rec.user || ptr > s->rec.user + s->rec.size) return false;
  if (stream == s->alloc_stream) return true;
  for (uint32_t i = 0; i < s->n_streams; i++)
    if (s->streams[i] == stream) return true;
  if (s->n_streams < kMaxStreams) s->streams[s->n_streams++] = stream;
  else s->streams_overflow = 1;
  return true;
}

FreeStatus DeviceAllocator::Free(CUdeviceptr ptr, CUstream stream, uint32_t stack_id) {
  if (!InBlocks(ptr)) return FreeStatus::kNotGuarded;
  uint64_t t0 = NowNs();
  uint32_t idx = Lookup(ptr);
  DeviceEvent bad;
  Pending* p = nullptr;
  SlotRecord rec;
  CUstream used[kMaxWaits];
  uint32_t n_used = 0;
  bool overflow = false;
  StreamUse uses[kMaxUses];
  uint32_t n_uses = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    Slot* s = idx ? SlotOf(idx) : nullptr;
    if (s == nullptr || s->rec.user != ptr || s->phase != kLive) {
      bool freed_before = s != nullptr && s->rec.user == ptr && s->rec.freed_by != FreedBy::kNotFreed &&
                          (s->phase == kFreeing || s->phase == kQuarantined || s->phase == kRangeFree ||
                           s->phase == kReady);
      bad.kind = freed_before ? ReportKind::kDoubleFree : ReportKind::kInvalidFree;
      bad.address = ptr;
      if (s != nullptr && LoadState(s->rec) != SlotState::kNever) {
        bad.has_record = true;
        bad.record = s->rec;
      }
      lock.unlock();
      Report(&bad);
      return freed_before ? FreeStatus::kDoubleFree : FreeStatus::kInvalidFree;
    }
    uint32_t n = s->total_granules - 1;
    s->phase = kFreeing;
    s->rec.freed_by = FreedBy::kExplicit;
    s->rec.free_stack = stack_id;
    s->rec.free_test = CurrentTestId();
    StoreState(&s->rec, SlotState::kQuarantined);
    stats_.frees++;
    stats_.live--;
    stats_.live_bytes -= s->rec.size;
    stats_.live_granules -= n;
    rec = s->rec;
    if (n == 0 || shut_down_ || broken_) {
      // Nothing mapped, or no more driver calls: bookkeeping only (a range
      // left mapped at exit or after a sticky error is never reused).
      if (n == 0) Quarantine(idx);
      if (config_.log_allocations) LogFree(rec.alloc_id, ptr, rec.size, rec.mode, "cuda", rec.free_test);
      return FreeStatus::kFreed;
    }
    while ((readback_slots_.empty() || pending_bytes_ > config_.pending_max_bytes) && !broken_)
      readback_free_.wait_for(lock, std::chrono::milliseconds(50));
    if (broken_) return FreeStatus::kFreed;
    p = new Pending{idx, readback_slots_.back(), nullptr, stream, true, false, false};
    readback_slots_.pop_back();
    pending_bytes_ += static_cast<uint64_t>(n) * granule_;
    n_used = s->n_streams;
    for (uint32_t i = 0; i < n_used; i++) used[i] = s->streams[i];
    overflow = s->streams_overflow || s->uses_overflow;
    n_uses = s->n_uses;
    for (uint32_t i = 0; i < n_uses; i++) uses[i] = s->uses[i];
  }
  if (config_.log_allocations) LogFree(rec.alloc_id, ptr, rec.size, rec.mode, "cuda", rec.free_test);
  // The record_stream rule: a kernel on another stream used the memory and
  // this free is not ordered after that use (nor was the stream declared).
  // Reported, and the free waits for that stream too, so nothing is
  // corrupted meanwhile.
  for (uint32_t i = 0; i < n_uses; i++) {
    CUstream other = StreamHandle(uses[i].stream);
    bool declared = false;
    for (uint32_t j = 0; j < n_used; j++) declared = declared || used[j] == other;
    if (declared || Ordered(stream, uses[i])) continue;
    DeviceEvent cross;
    cross.kind = ReportKind::kCrossStreamFree;
    cross.has_record = true;
    cross.record = rec;
    cross.free_stream = reinterpret_cast<uintptr_t>(stream);
    cross.use_stream = reinterpret_cast<uintptr_t>(other);
    cross.use_launch = uses[i].launch;
    Report(&cross);
    if (n_used < kMaxWaits) used[n_used++] = other;
    else overflow = true;
  }
  InternalCalls internal;
  // The canary check and the unmapping wait for every use of the allocation
  // queued before the free (on declared streams too). Without syncOnFree a
  // plain free makes no driver call: the background thread records one
  // event per stream after it and checks once that completes. With
  // syncOnFree the free waits, reads back and checks now.
  bool now = config_.sync_on_free || n_used > 0 || overflow || CallerOnly(stream);
  if (now) {
    EnsureContext(drv_, ctx_);
    CUstream on = stream;
    CUresult r = cuda::kSuccess;
    if (n_used > 0 || overflow) {
      on = order_stream_;
      Fence* tmp = NewFence(1);
      r = tmp ? cuda::kSuccess : cuda::kErrorOutOfMemory;
      for (uint32_t i = 0; i <= n_used && r == cuda::kSuccess; i++) {
        r = drv_->cuEventRecord(tmp->event, i < n_used ? used[i] : stream);
        if (r == cuda::kSuccess) r = drv_->cuStreamWaitEvent(order_stream_, tmp->event, 0);
      }
      if (overflow && r == cuda::kSuccess) r = drv_->cuCtxSynchronize();
      std::lock_guard<std::mutex> lock(mu_);
      DropFence(tmp);
    }
    p->stream = on;
    p->fence = NewFence(1);
    if (p->fence == nullptr) r = cuda::kErrorOutOfMemory;
    uint8_t* rb = ReadbackAt(p->readback);
    if (config_.sync_on_free) {
      if (r == cuda::kSuccess) r = ReadWindows(rec, rb, on);
      p->copied = true;
    }
    if (r == cuda::kSuccess) r = drv_->cuEventRecord(p->fence->event, on);
    if (r == cuda::kSuccess && config_.sync_on_free) {
      r = drv_->cuEventSynchronize(p->fence->event);
      if (r == cuda::kSuccess) {
        CheckCanary(idx, rb);
        p->check = false;
        p->checked_clean = true;
      }
    }
    if (r != cuda::kSuccess) {
      p->check = false;
      if (cuda::IsSticky(r)) NoteBroken(r, "freeing a guarded allocation");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(p);
    stats_.free_ns += NowNs() - t0;
  }
  wake_.notify_one();
  return FreeStatus::kFreed;
}

void DeviceAllocator::CheckCanary(uint32_t index, const uint8_t* rb) {
  Slot* s = SlotOf(index);
  SlotRecord rec = s->rec;
  SlotGeometry g = Geometry(rec);
  size_t lb = g.canary_before_end - g.canary_before_start;
  size_t la = g.canary_after_end - g.canary_after_start;
  // The same check as host slots, run over the bytes read back: a geometry
  // whose canary ranges lie in the readback buffer, distances unchanged.
  uintptr_t base = reinterpret_cast<uintptr_t>(rb);
  SlotGeometry h{};
  h.canary_before_start = base;
  h.canary_before_end = h.user = h.user_end = h.canary_after_start = base + lb;
  h.canary_after_end = base + lb + la;
  CanaryDamage d = ::mate::CheckCanary(h);
  if (!d.any() || rec.canary_reported) return;
  s->rec.canary_reported = 1;
  DeviceEvent e;
  e.kind = ReportKind::kCanaryCorruption;
  e.has_record = true;
  e.record = s->rec;
  e.damage = d;
  Report(&e);
}

void DeviceAllocator::Finish(const Pending& p, bool check) {
  Slot* s = SlotOf(p.slot);
  bool verified = check && p.check;  // the canary was read back after the last use...
  if (verified) CheckCanary(p.slot, ReadbackAt(p.readback));
  verified = verified || p.checked_clean;
  uint32_t n = s->total_granules - 1;
  if (config_.recycle_when_behind && verified && !s->rec.canary_reported) {  // ...and is intact
    std::lock_guard<std::mutex> lock(mu_);
    auto it = classes_.find(n);
    // Behind: this size ran out of ready ranges in the last 20 ms.
    if (it != classes_.end() && NowNs() - it->second.starved_ns < 20000000ull &&
        it->second.ready.size() + it->second.preparing < it->second.target &&
        ready_bytes_ + n * granule_ <= config_.prepare_budget_bytes) {
      // Straight back to ready, no driver call: its canary windows are
      // intact, so an allocation of the same size needs no fill either.
      s->phase = kReady;
      s->filled = s->rec.size + 1;
      it->second.ready.push_back(p.slot);
      ready_bytes_ += n * granule_;
      stats_.recycled++;
      readback_slots_.push_back(p.readback);
      pending_bytes_ -= static_cast<uint64_t>(n) * granule_;
      DropFence(p.fence);
      readback_free_.notify_all();
      return;
    }
  }
  SlotGeometry g = GeometryOf(s->rec, granule_);
  CUresult r = drv_->cuMemUnmap(g.data_start, n * granule_);
  if (r == cuda::kSuccess) RetireChunk(n, s->chunk);
  std::lock_guard<std::mutex> lock(mu_);
  if (r == cuda::kSuccess) {
    s->mapped = 0;
    Quarantine(p.slot);
  } else {
    s->phase = kQuarantined;  // left mapped and never reused
  }
  readback_slots_.push_back(p.readback);
  pending_bytes_ -= static_cast<uint64_t>(n) * granule_;
  DropFence(p.fence);
  readback_free_.notify_all();
}

bool DeviceAllocator::ProcessPending(bool wait) {
  std::deque<Pending*> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(pending_);
  }
  if (batch.empty()) return false;
  bool progressed = false;
  // One event per stream after the frees that have none yet.
  std::vector<std::pair<CUstream, Fence*>> fences;
  for (Pending* p : batch) {
    if (p->fence != nullptr) continue;
    auto it = std::find_if(fences.begin(), fences.end(), [&](auto& f) { return f.first == p->stream; });
    if (it == fences.end()) {
      fences.emplace_back(p->stream, nullptr);
      it = fences.end() - 1;
    }
    if (it->second == nullptr) it->second = NewFence(0);
    if (it->second == nullptr) continue;  // no event: tried again next pass
    it->second->refs++;
    p->fence = it->second;
  }
  for (auto& [stream, f] : fences) {
    if (f == nullptr) continue;
    CUresult r = drv_->cuEventRecord(f->event, stream);
    if (cuda::IsSticky(r)) NoteBroken(r, "recording after freed allocations' last use");
    else if (r != cuda::kSuccess) f->done = true;  // a stream that is gone: nothing of it is left to wait for
  }
  // Which fences completed (each queried once).
  std::vector<Fence*> queried;
  for (Pending* p : batch) {
    Fence* f = p->fence;
    if (f == nullptr || f->done || std::find(queried.begin(), queried.end(), f) != queried.end()) continue;
    queried.push_back(f);
    if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) break;
    CUresult r = wait ? drv_->cuEventSynchronize(f->event) : drv_->cuEventQuery(f->event);
    if (r == cuda::kErrorNotReady) continue;
    if (cuda::IsSticky(r)) {
      NoteBroken(r, "waiting for a freed allocation's last use");
      break;
    }
    f->done = true;
  }
  std::deque<Pending*> keep;
  std::vector<Pending*> done;
  for (Pending* p : batch) {
    if (p->fence != nullptr && p->fence->done && !__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) done.push_back(p);
    else keep.push_back(p);
  }
  // Canary bytes of frees that only recorded an event: read back now, after
  // their last use, in one batch.
  bool copies = false;
  for (Pending* p : done) {
    if (!p->check || p->copied) continue;
    CUresult r = ReadWindows(SlotOf(p->slot)->rec, ReadbackAt(p->readback), order_stream_);
    p->copied = r == cuda::kSuccess;
    p->check = p->copied;
    copies = true;
  }
  if (copies) {
    CUresult r = drv_->cuStreamSynchronize(order_stream_);
    if (cuda::IsSticky(r)) NoteBroken(r, "reading back canaries");
    if (r != cuda::kSuccess)
      for (Pending* p : done) p->check = false;
  }
  for (Pending* p : done) {
    if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) {
      keep.push_back(p);
      continue;
    }
    Finish(*p, true);
    delete p;
    progressed = true;
  }
  (void)wait;
  std::lock_guard<std::mutex> lock(mu_);
  while (!keep.empty()) {
    pending_.push_front(keep.back());
    keep.pop_back();
  }
  return progressed;
}

bool DeviceAllocator::PrepareAhead() {
  struct Job {
    uint32_t n, idx;
    CUmemGenericAllocationHandle chunk;
    bool have, ok;
  };
  std::vector<Job> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [n, c] : classes_) {
      while (jobs.size() < kPrepareBatch && c.ready.size() + c.preparing < c.target &&
             ready_bytes_ + n * granule_ <= config_.prepare_budget_bytes) {
        uint32_t idx = AcquireRange(n);
        if (idx == 0) break;
        SlotOf(idx)->phase = kPreparing;
        Job j{n, idx, 0, false, false};
        j.have = TakeIdleChunk(n, &j.chunk);
        c.preparing++;
        ready_bytes_ += n * granule_;
        jobs.push_back(j);
      }
    }
  }
  if (jobs.empty()) return false;
  for (Job& j : jobs) {
    CUresult r = j.have ? cuda::kSuccess : CreateChunk(j.n, &j.chunk);
    if (r != cuda::kSuccess) continue;
    r = MapSlot(j.idx, j.n, j.chunk);
    if (r != cuda::kSuccess) {
      RetireChunk(j.n, j.chunk);
      if (cuda::IsSticky(r)) NoteBroken(r, "mapping ahead");
      continue;
    }
    // Ready slots are canary-filled whole: any size of the class fits.
    SlotGeometry g = GeometryOf(SlotOf(j.idx)->rec, granule_);
    r = drv_->cuMemsetD8Async(g.data_start, kCanaryFill, j.n * granule_, prep_stream_);
    j.ok = r == cuda::kSuccess;
    SlotOf(j.idx)->filled = kFilledWhole;
  }
  CUresult r = drv_->cuStreamSynchronize(prep_stream_);
  if (cuda::IsSticky(r)) NoteBroken(r, "mapping ahead");
  std::vector<std::pair<uint32_t, CUmemGenericAllocationHandle>> unmapped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Job& j : jobs) {
      ClassState& c = classes_[j.n];
      c.preparing--;
      if (j.ok && r == cuda::kSuccess) {
        SlotOf(j.idx)->phase = kReady;
        c.ready.push_back(j.idx);
      } else {
        ready_bytes_ -= j.n * granule_;
        c.target = static_cast<uint32_t>(c.ready.size());  // short of memory: stop asking
        if (SlotOf(j.idx)->mapped) unmapped.emplace_back(j.idx, j.chunk);
        else ReleaseRange(j.idx);
      }
    }
  }
  for (auto& [idx, chunk] : unmapped) {
    Slot* s = SlotOf(idx);
    uint32_t n = s->total_granules - 1;
    if (drv_->cuMemUnmap(GeometryOf(s->rec, granule_).data_start, n * granule_) == cuda::kSuccess) {
      RetireChunk(n, chunk);
      std::lock_guard<std::mutex> lock(mu_);
      s->mapped = 0;
      ReleaseRange(idx);
    }
  }
  return true;
}

void DeviceAllocator::CheckHealth(const char* where) {
  if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE) || prep_stream_ == nullptr) return;
  InternalCalls internal;
  CUresult r = drv_->cuStreamQuery(prep_stream_);
  if (cuda::IsSticky(r)) NoteBroken(r, where);
}

void DeviceAllocator::Run() {
  InternalCalls internal;  // this thread's driver calls are all the guard's own
  drv_->cuCtxSetCurrent(ctx_);
  auto last_health = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    bool did = false;
    uint64_t t0 = NowNs();
    if (!__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) {
      // Ready slots first (allocations wait on them), then the unmapping
      // of freed ranges (which returns their memory), then refill.
      did |= PrepareAhead();
      did |= ProcessPending(false);
      did |= PrepareAhead();
      auto now = std::chrono::steady_clock::now();
      if (now - last_health > std::chrono::milliseconds(5)) {
        CheckHealth("a background check");
        last_health = now;
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (did) stats_.background_ns += NowNs() - t0;
    if (stop_) return;
    if (!did) wake_.wait_for(lock, pending_.empty() ? std::chrono::microseconds(5000) : std::chrono::microseconds(100));
  }
}

void DeviceAllocator::NoteBroken(CUresult err, const char* where, uint64_t exact_launch) {
  DeviceEvent e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return;
    __atomic_store_n(&broken_, 1, __ATOMIC_RELEASE);
    if (err != cuda::kErrorIllegalAddress) return;  // another kernel exception: not a guard's finding
    for (uint32_t i = 1; i <= slot_count_; i++) {
      const Slot* s = SlotOf(i);
      if (s->phase == kLive) e.live.push_back(s->rec);
      else if ((s->phase == kFreeing || s->phase == kQuarantined) && s->rec.freed_by != FreedBy::kNotFreed)
        e.freed.push_back(s->rec);
    }
  }
  auto newest_first = [](const SlotRecord& a, const SlotRecord& b) { return a.alloc_id > b.alloc_id; };
  std::sort(e.live.begin(), e.live.end(), newest_first);
  std::sort(e.freed.begin(), e.freed.end(), newest_first);
  e.live_total = e.live.size();
  if (e.live.size() > 16) e.live.resize(16);
  if (e.freed.size() > 8) e.freed.resize(8);
  e.kind = ReportKind::kIllegalAddress;
  e.error = err;
  e.where = where;
  e.exact_launch = exact_launch;
  Report(&e);
}

void DeviceAllocator::Report(DeviceEvent* e) {
  e->device = ordinal_;
  e->granule = granule_;
  e->test_id = CurrentTestId();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.violations++;
    e->allocations = stats_.allocations;
    e->peak_live = stats_.peak_live;
    e->fallbacks = stats_.fallbacks;
  }
  if (sink_ != nullptr) sink_->OnEvent(*e);
}

void DeviceAllocator::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_ || stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  InternalCalls internal;
  cuda::CUcontext saved = nullptr;
  drv_->cuCtxGetCurrent(&saved);
  drv_->cuCtxSetCurrent(ctx_);
  if (!__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) {
    ProcessPending(true);  // damage found late is still reported
    CUresult r = drv_->cuCtxSynchronize();
    if (cuda::IsSticky(r)) NoteBroken(r, "the check at exit");
    else if (r == cuda::kSuccess) CheckLive();
  }
  if (saved != nullptr && saved != ctx_) drv_->cuCtxSetCurrent(saved);
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
}

void DeviceAllocator::CheckLive() {
  // Allocations still live at exit (a program's globals are freed after
  // the guard stops, if ever): their canaries are checked once here.
  std::vector<uint32_t> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t i = 1; i <= slot_count_; i++)
      if (SlotOf(i)->phase == kLive && SlotOf(i)->total_granules > 1) live.push_back(i);
  }
  uint8_t* rb = ReadbackAt(0);  // no frees are pending any more
  for (uint32_t idx : live) {
    CUresult r = ReadWindows(SlotOf(idx)->rec, rb, order_stream_);
    if (r == cuda::kSuccess) r = drv_->cuStreamSynchronize(order_stream_);
    if (r != cuda::kSuccess) return;
    CheckCanary(idx, rb);
  }
}

DeviceStats DeviceAllocator::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace device
}  // namespace mate
