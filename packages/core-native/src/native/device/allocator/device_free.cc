// A free: a bad one reported (double, invalid), the bookkeeping of a good
// one, the record_stream rule (a use on another stream the free is not
// ordered after), and the fence after the allocation's last use that its
// canary check and unmapping wait for.
#include "device/allocator/device_allocator_internal.h"

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

FreeStatus DeviceAllocator::Free(CUdeviceptr ptr, CUstream stream, uint32_t stack_id) {
  if (!InBlocks(ptr)) return FreeStatus::kNotGuarded;
  uint64_t t0 = CounterStartNs();
  uint32_t idx = Lookup(ptr);
  Pending* p = nullptr;
  SlotRecord rec;
  FreeWaits waits;
  {
    auto lock = CallerLock();
    Slot* s = idx ? SlotOf(idx) : nullptr;
    if (s == nullptr || s->rec.user != ptr || s->phase != kLive) return BadFree(s, ptr, &lock);
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
      if (config_.settings.log_allocations) LogFree(rec.alloc_id, ptr, rec.size, rec.mode, "cuda", rec.free_test);
      return FreeStatus::kFreed;
    }
    auto must_wait = [&] { return (readback_slots_.empty() || pending_bytes_ > pending_max_bytes_) && !broken_; };
    if (must_wait()) {
      uint64_t w0 = NowNs();
      while (must_wait()) readback_free_.wait_for(lock, std::chrono::milliseconds(50));
      stats_.free_waits++;
      stats_.free_wait_ns += NowNs() - w0;
    }
    if (broken_) return FreeStatus::kFreed;
    p = new Pending{idx, readback_slots_.back(), nullptr, stream, true, false, false};
    readback_slots_.pop_back();
    pending_bytes_ += static_cast<uint64_t>(n) * granule_;
    waits.n_used = s->n_streams;
    for (uint32_t i = 0; i < waits.n_used; i++) waits.used[i] = s->streams[i];
    waits.overflow = s->streams_overflow || s->uses_overflow;
    waits.n_uses = s->n_uses;
    for (uint32_t i = 0; i < waits.n_uses; i++) waits.uses[i] = s->uses[i];
  }
  if (config_.settings.log_allocations) LogFree(rec.alloc_id, ptr, rec.size, rec.mode, "cuda", rec.free_test);
  CheckStreamRule(rec, stream, &waits);
  FenceFree(p, rec, stream, waits);
  bool wake;
  {
    auto lock = CallerLock();
    // With frees already pending the background thread is at work on them
    // or polls their fences again within 100 us (Run): no wake-up per free.
    wake = pending_.empty() && ClaimWakeLocked();
    pending_.push_back(p);
    stats_.free_ns += CounterElapsedNs(t0);
  }
  if (wake) wake_.notify_one();
  return FreeStatus::kFreed;
}

FreeStatus DeviceAllocator::BadFree(Slot* s, CUdeviceptr ptr, std::unique_lock<std::mutex>* lock) {
  bool freed_before =
      s != nullptr && s->rec.user == ptr && s->rec.freed_by != FreedBy::kNotFreed &&
      (s->phase == kFreeing || s->phase == kQuarantined || s->phase == kRangeFree || s->phase == kReady);
  DeviceEvent bad;
  bad.kind = freed_before ? ReportKind::kDoubleFree : ReportKind::kInvalidFree;
  bad.address = ptr;
  if (s != nullptr && LoadState(s->rec) != SlotState::kNever) {
    bad.has_record = true;
    bad.record = s->rec;
  }
  lock->unlock();
  Report(&bad);
  return freed_before ? FreeStatus::kDoubleFree : FreeStatus::kInvalidFree;
}

// The record_stream rule: a kernel on another stream used the memory and
// this free is not ordered after that use (nor was the stream declared).
// Reported, and the free waits for that stream too, so nothing is
// corrupted meanwhile.
void DeviceAllocator::CheckStreamRule(const SlotRecord& rec, CUstream stream, FreeWaits* w) {
  for (uint32_t i = 0; i < w->n_uses; i++) {
    CUstream other = hooks_.StreamHandle(w->uses[i].stream);
    bool declared = false;
    for (uint32_t j = 0; j < w->n_used; j++) declared = declared || w->used[j] == other;
    if (declared || hooks_.Ordered(stream, w->uses[i])) continue;
    DeviceEvent cross;
    cross.kind = ReportKind::kCrossStreamFree;
    cross.has_record = true;
    cross.record = rec;
    cross.free_stream = reinterpret_cast<uintptr_t>(stream);
    cross.use_stream = reinterpret_cast<uintptr_t>(other);
    cross.use_launch = w->uses[i].launch;
    Report(&cross);
    if (w->n_used < kMaxWaits) w->used[w->n_used++] = other;
    else w->overflow = true;
  }
}

// The canary check and the unmapping wait for every use of the allocation
// queued before the free (on declared streams too). Without syncOnFree a
// plain free makes no driver call: the background thread records one
// event per stream after it and checks once that completes. With
// syncOnFree the free waits, reads back and checks now.
void DeviceAllocator::FenceFree(Pending* p, const SlotRecord& rec, CUstream stream, const FreeWaits& w) {
  InternalCalls internal;
  bool now = config_.sync_on_free || w.n_used > 0 || w.overflow || CallerOnly(stream);
  if (!now) return;
  EnsureContext(drv_, ctx_);
  CUstream on = stream;
  CUresult r = cuda::kSuccess;
  if (w.n_used > 0 || w.overflow) {
    on = order_stream_;
    Fence* tmp = NewFence(1);
    r = tmp ? cuda::kSuccess : cuda::kErrorOutOfMemory;
    for (uint32_t i = 0; i <= w.n_used && r == cuda::kSuccess; i++) {
      r = drv_->cuEventRecord(tmp->event, i < w.n_used ? w.used[i] : stream);
      if (r == cuda::kSuccess) r = drv_->cuStreamWaitEvent(order_stream_, tmp->event, 0);
    }
    if (w.overflow && r == cuda::kSuccess) r = drv_->cuCtxSynchronize();
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
      CheckCanary(p->slot, rb);
      p->check = false;
      p->checked_clean = true;
    }
  }
  if (r != cuda::kSuccess) {
    p->check = false;
    if (cuda::IsSticky(r)) NoteBroken(r, "freeing a guarded allocation");
  }
}

}  // namespace device
}  // namespace mate
