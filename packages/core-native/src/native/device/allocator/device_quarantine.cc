// The background thread: fences recorded after freed allocations' last
// use, pending frees checked and unmapped once their work is done, the
// quarantine of unmapped ranges.
#include "device/allocator/device_allocator_internal.h"

#include <algorithm>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

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

void DeviceAllocator::Quarantine(uint32_t index) {
  Slot* s = SlotOf(index);
  s->phase = kQuarantined;
  quarantine_.push_back(index);
  stats_.quarantined++;
  stats_.quarantined_bytes += s->total_granules * granule_;
  while (!quarantine_.empty() && (stats_.quarantined > config_.settings.quarantine_max_count ||
                                  stats_.quarantined_bytes > config_.quarantine_max_bytes)) {
    uint32_t old = quarantine_.front();
    quarantine_.pop_front();
    stats_.quarantined--;
    stats_.quarantined_bytes -= SlotOf(old)->total_granules * granule_;
    ReleaseRange(old);  // still unmapped; its history stays until reused
  }
}

void DeviceAllocator::Finish(const Pending& p, bool check) {
  Slot* s = SlotOf(p.slot);
  bool verified = check && p.check;  // the canary was read back after the last use...
  if (verified) CheckCanary(p.slot, ReadbackAt(p.readback));
  verified = verified || p.checked_clean;
  uint32_t n = s->total_granules - 1;
  // A shared chunk may still be mapped by another process: never handed out again.
  bool shared = __atomic_load_n(&s->exported, __ATOMIC_ACQUIRE) != 0;
  if (config_.recycle_when_behind && verified && !s->rec.canary_reported && !shared) {  // ...and is intact
    std::lock_guard<std::mutex> lock(mu_);
    auto it = classes_.find(n);
    // Behind: this size ran out of ready ranges lately (behind_ns).
    if (it != classes_.end() && NowNs() - it->second.starved_ns < config_.behind_ns &&
        it->second.ready.size() + it->second.preparing < it->second.target &&
        ready_bytes_ + n * granule_ <= config_.prepare_budget_bytes) {
      // Straight back to ready, no driver call: its canary windows are
      // intact, so an allocation of the same size needs no fill either.
      s->phase = kReady;
      s->filled = s->rec.size + 1;
      it->second.ready.push_back({p.slot, s->filled});
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
  if (r == cuda::kSuccess) {
    if (shared) {
      ReleaseChunk(n, s->chunk);
      __atomic_store_n(&s->exported, 0, __ATOMIC_RELEASE);
    } else {
      RetireChunk(n, s->chunk);
    }
  }
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

bool DeviceAllocator::ProcessPending(bool wait, std::unique_lock<std::mutex>* pass) {
  std::deque<Pending*> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(pending_);
  }
  if (batch.empty()) return false;
  bool progressed = false;
  uint64_t records = 0, queries = 0;  // driver calls for fences (counted)
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
    records++;
    if (cuda::IsSticky(r)) NoteBroken(r, "recording after freed allocations' last use");
    else if (r != cuda::kSuccess) f->done = true;  // a stream that is gone: nothing of it is left to wait for
  }
  // Which fences completed (each queried once). Work on a stream completes
  // in order and the batch is in free order: once a stream's fence is not
  // done, its later ones are not asked (passes come often; a GPU running
  // behind the host leaves many fences outstanding).
  std::vector<Fence*> queried;
  std::vector<CUstream> behind;
  for (Pending* p : batch) {
    Fence* f = p->fence;
    if (f == nullptr || f->done || std::find(queried.begin(), queried.end(), f) != queried.end()) continue;
    if (!wait && std::find(behind.begin(), behind.end(), p->stream) != behind.end()) continue;
    queried.push_back(f);
    if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) break;
    CUresult r = wait ? drv_->cuEventSynchronize(f->event) : drv_->cuEventQuery(f->event);
    queries++;
    if (r == cuda::kErrorNotReady) {
      behind.push_back(p->stream);
      continue;
    }
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
  // Checked before any is unmapped: a test's end (CheckPendingNow) waits
  // for these checks, not for the unmapping.
  for (Pending* p : done) {
    if (!p->check || __atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) continue;
    CheckCanary(p->slot, ReadbackAt(p->readback));
    p->check = false;
    p->checked_clean = true;  // damage found is in rec.canary_reported
  }
  auto put_back = [&] {  // under mu_: ahead of frees made meanwhile, free order kept
    while (!keep.empty()) {
      pending_.push_front(keep.back());
      keep.pop_back();
    }
  };
  if (pass != nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      put_back();  // frees not yet done are the test's end's to check
    }
    pass->unlock();
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
  stats_.fence_records += records;
  stats_.fence_queries += queries;
  put_back();
  return progressed;
}

void DeviceAllocator::CheckPendingNow() {
  if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) return;
  std::lock_guard<std::mutex> pass(pass_mu_);  // frees in the background's hands are back in pending_
  std::deque<Pending*> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    auto unchecked = [](const Pending* p) { return p->check && !p->copied; };
    if (std::none_of(pending_.begin(), pending_.end(), unchecked)) return;  // syncOnFree checked them
    batch.swap(pending_);
  }
  InternalCalls internal;
  {
    InContext in_ctx(drv_, ctx_);
    // Every use of these frees was queued before their free, so before this
    // synchronize: one wait for all of them instead of one per free.
    CUresult r = drv_->cuCtxSynchronize();
    bool copies = false;
    for (Pending* p : batch) {
      if (r != cuda::kSuccess || !p->check || p->copied) continue;
      p->copied = ReadWindows(SlotOf(p->slot)->rec, ReadbackAt(p->readback), order_stream_) == cuda::kSuccess;
      p->check = p->copied;
      copies = copies || p->copied;
    }
    if (r == cuda::kSuccess && copies) r = drv_->cuStreamSynchronize(order_stream_);
    if (cuda::IsSticky(r)) NoteBroken(r, "checking freed allocations at the end of a test");
    for (Pending* p : batch) {
      if (!p->check || !p->copied) continue;
      if (r == cuda::kSuccess) {
        CheckCanary(p->slot, ReadbackAt(p->readback));
        p->checked_clean = true;  // damage found is in rec.canary_reported
      }
      p->check = false;  // read back (or failed to be): the background thread only unmaps it
    }
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!batch.empty()) {  // ahead of frees made meanwhile: free order kept
      pending_.push_front(batch.back());
      batch.pop_back();
    }
    wake = ClaimWakeLocked();
  }
  if (wake) wake_.notify_one();
}

void DeviceAllocator::Run() {
  InternalCalls internal;  // this thread's driver calls are all the guard's own
  drv_->cuCtxSetCurrent(ctx_);
  auto last_health = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      woken_ = false;  // what callers change from here on wakes this thread again
    }
    bool did = false;
    uint64_t t0 = NowNs();
    if (!__atomic_load_n(&broken_, __ATOMIC_ACQUIRE)) {
      // Freed ranges first, then refill (a short batch while frees wait).
      // When a size ran short, a freed range whose canaries check clean
      // goes back to ready with no driver call (recycle_when_behind), far
      // cheaper than a new mapping (~50 us of serialized driver time): it
      // must not wait behind batches of mappings, or a burst of
      // allocations empties the pool and maps ranges on the caller's
      // thread, serialized behind ours. A fence not done when first asked
      // is asked again in the next pass.
      {
        std::unique_lock<std::mutex> pass(pass_mu_);
        did |= ProcessPending(false, &pass);
      }
      did |= PrepareAhead();
      auto now = std::chrono::steady_clock::now();
      if (now - last_health > std::chrono::milliseconds(5)) {
        CheckHealth("a background check");
        last_health = now;
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (did) {
      stats_.background_ns += NowNs() - t0;
      stats_.passes++;
    }
    if (stop_) return;
    if (!did && !woken_)
      wake_.wait_for(lock, pending_.empty() ? std::chrono::microseconds(5000) : std::chrono::microseconds(100));
  }
}

}  // namespace device
}  // namespace mate
