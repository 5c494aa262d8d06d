// The device allocator's calls: create, allocate, free, record a stream,
// report, stats and shutdown (device_allocator_internal.h lists the files
// of its other jobs).
#include "device/allocator/device_allocator_internal.h"

#include <pthread.h>

#include <cstdlib>

#include <algorithm>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

DeviceAllocator* DeviceAllocator::Create(const cuda::Driver* drv, int ordinal, const DeviceConfig& config,
                                         EventSink* sink, const AllocatorHooks& hooks, std::string* error) {
  auto* a = new DeviceAllocator(drv, ordinal, config, sink, hooks);
  if (!a->Init(error)) return nullptr;  // leaked on purpose: a half-made allocator may own driver objects
  return a;
}

DeviceAllocator::DeviceAllocator(const cuda::Driver* drv, int ordinal, const DeviceConfig& config, EventSink* sink,
                                 const AllocatorHooks& hooks)
    : drv_(drv), ordinal_(ordinal), config_(config), sink_(sink), hooks_(hooks) {}

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
  InContext in_ctx(drv_, ctx_);
  prop_.type = cuda::kMemAllocationTypePinned;
  prop_.location.type = cuda::kMemLocationTypeDevice;
  prop_.location.id = dev_;
  // Chunks that can become a file descriptor, so a guarded tensor can be
  // shared with another process (device_ipc.cc), as PyTorch's own
  // expandable segments ask for.
  int posix_fd = 0;
  drv_->cuDeviceGetAttribute(&posix_fd, cuda::kDeviceAttributeHandleTypePosixFdSupported, dev_);
  if (posix_fd && drv_->cuMemExportToShareableHandle != nullptr) {
    prop_.requestedHandleTypes = cuda::kMemHandleTypePosixFd;
    exportable_ = true;
  }
  access_[0].location = prop_.location;
  access_[0].flags = cuda::kMemAccessProtReadWrite;
  size_t gran = 0;
  r = drv_->cuMemGetAllocationGranularity(&gran, &prop_, cuda::kMemAllocGranularityMinimum);
  if (r != cuda::kSuccess || gran == 0) return fail("cuMemGetAllocationGranularity", r);
  granule_ = gran;
  stats_.granule = gran;
  // Frees of large tensors while the GPU runs a few steps behind (a
  // GPU-bound training loop) pend for that long: with a fixed 1 GiB they
  // made the program wait for the GPU at each free, starving its queue.
  // An eighth of the device's memory, all given back before an
  // allocation fails (device_memory_pressure.cc).
  pending_max_bytes_ = config_.pending_max_bytes;
  size_t free_b = 0, total_b = 0;
  if (drv_->cuMemGetInfo(&free_b, &total_b) == cuda::kSuccess)
    pending_max_bytes_ = std::max<uint64_t>(pending_max_bytes_, total_b / 8);
  if (const char* mib = getenv("MATE_GUARD_CUDA_PENDING_MIB"))  // tuning (bench/cuda): the bound itself
    pending_max_bytes_ = strtoull(mib, nullptr, 10) << 20;
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
  if ((r = drv_->cuStreamCreate(&prep_stream_, cuda::kStreamNonBlocking)) != cuda::kSuccess)
    return fail("cuStreamCreate", r);
  if ((r = drv_->cuStreamCreate(&order_stream_, cuda::kStreamNonBlocking)) != cuda::kSuccess)
    return fail("cuStreamCreate", r);
  void* host = nullptr;
  if ((r = drv_->cuMemAllocHost(&host, kReadbackSlots * kReadbackBytes)) != cuda::kSuccess)
    return fail("cuMemAllocHost", r);
  readback_ = static_cast<uint8_t*>(host);
  for (uint32_t i = 0; i < kReadbackSlots; i++) readback_slots_.push_back(kReadbackSlots - 1 - i);
  for (int i = 0; i < 64; i++) {
    cuda::CUevent ev = nullptr;
    if (drv_->cuEventCreate(&ev, cuda::kEventDisableTiming) == cuda::kSuccess) events_.push_back(ev);
  }
  thread_ = std::thread([this] { Run(); });
  // Named by its creator, before any caller can look (top -H, perf, gdb
  // tell it from the program's threads): naming itself raced a reader.
  pthread_setname_np(thread_.native_handle(), "mate-guard-cuda");
  return true;
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
  if (config_.settings.log_allocations) LogUnguarded(*out, size, reason, "cuda", CurrentTestId());
  return cuda::kSuccess;
}

CUresult DeviceAllocator::Allocate(size_t size, CUstream stream, uint32_t stack_id, CUdeviceptr* out, bool* guarded) {
  uint64_t t0 = CounterStartNs();
  *out = 0;
  *guarded = false;
  if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) return cuda::kErrorIllegalAddress;
  if (shut_down_) return Fallback(size, "the device guard had shut down (process exit)", out);
  uint64_t max_data = (1ull << 31);
  if (size / granule_ >= max_data) return Fallback(size, "the allocation is larger than a guarded range can be", out);
  uint32_t n = DataGranulesFor(size);
  uint32_t idx = TakeReady(n, size);
  if (idx == 0) {
    CUresult r = RangeOnDemand(n, size, stream, &idx, out);
    if (idx == 0) return r;  // unguarded (a plain allocation in *out) or out of memory
  }
  Slot* s = SlotOf(idx);
  BeginLife(s, size, n, stack_id, stream, t0);
  *out = s->rec.user;
  *guarded = true;
  return cuda::kSuccess;
}

uint32_t DeviceAllocator::TakeReady(uint32_t n, size_t size) {
  if (n == 0 || n > kMaxPreparedGranules) return 0;
  uint32_t idx = 0;
  bool wake = false;
  {
    auto lock = CallerLock();
    ClassState& c = classes_[n];
    uint32_t cap = static_cast<uint32_t>(
        std::clamp<uint64_t>(config_.prepare_budget_bytes / (n * granule_) / 4, 1, config_.prepare_ahead));
    if (!c.ready.empty()) {
      // The oldest ready range filled for this very size (mapped ahead to
      // replace it, or last checked clean at it), else the oldest filled
      // for its whole class (kept for sizes with none of their own), else
      // the oldest. A fill is a memset on the caller's thread and stream; a
      // loop allocating the same sizes every step finds ranges at its own
      // sizes. A class holds at most prepare_ahead: the scans are short.
      auto oldest_filled = [&](uint64_t filled) {
        return std::find_if(c.ready.begin(), c.ready.end(),
                            [&](const ClassState::Ready& r) { return r.filled == filled; });
      };
      auto it = oldest_filled(size + 1);
      if (it == c.ready.end()) it = oldest_filled(kFilledForClass);
      if (it == c.ready.end()) it = c.ready.begin();
      idx = it->idx;
      c.ready.erase(it);
      ready_bytes_ -= n * granule_;
      stats_.ready_hits++;
      if (c.ready.empty() && c.preparing > 0) c.starved_ns = NowNs();
    } else {
      // A miss: keep more of this size ready from now on. Not the first
      // request of a size: the background thread is falling behind.
      if (c.target > 0) c.starved_ns = NowNs();
      c.target = std::min<uint32_t>(c.target ? c.target * 2 : 4, cap);
      stats_.ready_misses++;
    }
    c.wanted.push_back(size);
    if (c.wanted.size() > config_.prepare_ahead) c.wanted.pop_front();
    wake = c.ready.size() + c.preparing < c.target && ClaimWakeLocked();
  }
  if (wake) wake_.notify_one();
  return idx;
}

CUresult DeviceAllocator::RangeOnDemand(uint32_t n, size_t size, CUstream stream, uint32_t* idx, CUdeviceptr* out) {
  const char* reason = nullptr;
  if (n == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    *idx = AcquireRange(0);  // zero bytes: a bare guard, no memory
    if (*idx == 0) reason = "the guarded GPU address space is full";
  } else {
    CUresult r = cuda::kSuccess;
    *idx = PrepareInline(n, size, stream, &reason, &r);
    uint64_t given = 0;
    if (*idx == 0 && r == cuda::kErrorOutOfMemory) {
      // Short of memory: give back what the guard keeps for later, retry once.
      given = GiveBack();
      *idx = PrepareInline(n, size, stream, &reason, &r);
    }
    if (*idx == 0 && r == cuda::kErrorOutOfMemory) {
      // A plain allocation needs no rounding: it may still fit (counted as unguarded).
      CUresult f = Fallback(size, reason, out);
      return f == cuda::kErrorOutOfMemory ? OutOfMemory(size, given) : f;
    }
  }
  return *idx == 0 ? Fallback(size, reason, out) : cuda::kSuccess;
}

void DeviceAllocator::BeginLife(Slot* s, size_t size, uint32_t n, uint32_t stack_id, CUstream stream, uint64_t t0) {
  PlaceUser(&s->rec, size);
  bool filled_now = false;
  if (s->filled != kFilledForClass && s->filled != size + 1 && size != 0) {
    // A range filled for another size: fill this size's windows,
    // in stream order before the caller's work.
    InternalCalls internal;
    EnsureContext(drv_, ctx_);
    FillWindows(s->rec, stream);
    filled_now = true;
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
    auto lock = CallerLock();
    s->phase = kLive;
    StoreState(&r, SlotState::kLive);
    stats_.allocations++;
    stats_.window_fills += filled_now;
    stats_.live++;
    stats_.live_bytes += size;
    stats_.live_granules += n;
    stats_.peak_live = std::max(stats_.peak_live, stats_.live);
    stats_.alloc_ns += CounterElapsedNs(t0);
  }
  if (config_.settings.log_allocations)
    LogAlloc(r.alloc_id, r.user, size, static_cast<uint64_t>(s->total_granules) * granule_, r.mode, "cuda",
             r.alloc_test);
}

bool DeviceAllocator::FindArg(CUdeviceptr ptr, ArgRef* out) {
  uint32_t idx = Lookup(ptr);
  if (idx == 0) return false;
  auto lock = CallerLock();
  return NoteArgLocked(idx, ptr, StreamUse{}, out, false);
}

void DeviceAllocator::NoteArgs(const uint64_t* ptrs, DeviceAllocator* const* owners, uint32_t n, const StreamUse& use,
                               ArgRef* out, bool* found) {
  uint32_t idx[kMaxLaunchWords];
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    idx[i] = owners[i] == this ? Lookup(ptrs[i]) : 0;
    any |= idx[i] != 0;
  }
  if (!any) return;
  auto lock = CallerLock();
  for (uint32_t i = 0; i < n; i++)
    if (idx[i] != 0) found[i] = NoteArgLocked(idx[i], ptrs[i], use, &out[i], true);
}

bool DeviceAllocator::NoteArgLocked(uint32_t idx, CUdeviceptr ptr, const StreamUse& use, ArgRef* out, bool note) {
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
  if (s->phase != kLive || !note) return true;
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

void DeviceAllocator::NoteBroken(CUresult err, const char* where, uint64_t exact_launch) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (broken_reported_) return;
    bool first = !broken_;
    __atomic_store_n(&broken_, 1, __ATOMIC_RELEASE);
    // Seen again, elsewhere: only the launch that faulted (launch blocking) still has something to add.
    if (!first && exact_launch == 0) return;
    if (exact_launch == 0 && hooks_.LaunchBlocking()) {
      // Under launch blocking the synchronize after the faulting launch
      // names it: a background check that saw the error first waits a
      // moment for that report (and makes it only if none comes).
      broken_seen_.wait_for(lock, std::chrono::milliseconds(200), [&] { return broken_reported_; });
      if (broken_reported_) return;
    }
    broken_reported_ = true;
    broken_seen_.notify_all();
  }
  DeviceEvent e;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  // Every kernel exception is reported (the process cannot go on): an
  // illegal address is the guard's own finding; a device-side assert (an
  // index check, as Inductor's kernels make) and the others name the
  // launches in flight all the same.
  e.kind = err == cuda::kErrorIllegalAddress ? ReportKind::kIllegalAddress
           : err == cuda::kErrorAssert       ? ReportKind::kDeviceAssert
                                             : ReportKind::kDeviceFault;
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
  {
    InContext in_ctx(drv_, ctx_);
    if (!__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) {
      std::lock_guard<std::mutex> pass(pass_mu_);  // a test's end check still running on another thread
      ProcessPending(true);                        // damage found late is still reported
      CUresult r = drv_->cuCtxSynchronize();
      if (cuda::IsSticky(r)) NoteBroken(r, "the check at exit");
      else if (r == cuda::kSuccess) CheckLive();
    }
  }
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
  DeviceStats s = stats_;
  LockWaits w = ReadLockWaits(caller_waits_);
  s.lock_waits = w.waits;
  s.lock_wait_ns = w.ns;
  for (const auto& [n, c] : classes_) s.ready_bytes += static_cast<uint64_t>(c.ready.size()) * n * granule_;
  return s;
}

}  // namespace device
}  // namespace mate
