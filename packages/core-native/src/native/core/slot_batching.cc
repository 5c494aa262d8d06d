// The allocator's batched slot work: small slots opened several at a time,
// freed slots checked and closed in batches by a background thread, and
// one-page slots kept open and full of canary bytes ahead of need by primer
// threads of their own. Every
// batch is one or two system calls instead of one or two per slot (see
// bench/native/slot-cycle.c for what each costs).
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "core/canary.h"
#include "core/guarded_allocator.h"
#include "core/slot_batching.h"
#include "platform/guard_pages.h"

namespace mate {

using namespace batching;

size_t GuardedAllocator::GatherSlots(uint32_t total_pages, uint32_t* out, size_t n, size_t max) {
  std::vector<uint32_t>& reusable = reusable_[total_pages];
  while (n < max && !reusable.empty()) {
    out[n++] = reusable.back();
    reusable.pop_back();
  }
  const char* ignored = nullptr;
  while (n < max) {
    uint32_t idx = NewSlot(total_pages, &ignored);
    if (idx == 0) break;
    out[n++] = idx;
  }
  return n;
}

void GuardedAllocator::DataRanges(const uint32_t* slots, size_t n, platform::PageRange* out) const {
  for (size_t i = 0; i < n; i++) {
    SlotGeometry g = GeometryOf(*RecordOf(slots[i]), page_);
    out[i] = {reinterpret_cast<void*>(g.data_start), g.data_end - g.data_start};
  }
}

// Opens `first` and up to kOpenAhead - 1 more slots of the same size (reused
// ones first, then new ones) in one system call; the others wait in ready_.
// If that fails, the others go back to reusable_ closed, and `first` stays
// closed for the caller to open alone.
bool GuardedAllocator::OpenAhead(uint32_t total_pages, uint32_t first) {
  uint32_t batch[kOpenAhead];
  batch[0] = first;
  size_t n = GatherSlots(total_pages, batch, 1, kOpenAhead);
  std::vector<uint32_t>& reusable = reusable_[total_pages];
  platform::PageRange ranges[kOpenAhead];
  DataRanges(batch, n, ranges);
  if (!platform::RemoveGuards(ranges, n)) {
    platform::InstallGuards(ranges, n);  // whatever was opened is closed again
    for (size_t i = n; i-- > 1;) reusable.push_back(batch[i]);
    return false;
  }
  // One-page slots: every allocation there writes its page (canary or
  // zero bytes), so it is faulted in now, all in one system call.
  if (total_pages == kPrimedPages) platform::PopulateWrite(ranges, n);
  // Handed out in the order taken (new slots: rising addresses, so that
  // buffers freed together are neighbours and close as one range).
  std::vector<uint32_t>& ready = ready_[total_pages];
  for (size_t i = n; i-- > 1;) ready.push_back(batch[i]);
  return true;
}

bool GuardedAllocator::StartCloser() {
  if (closer_started_) return batched_close_;
  closer_started_ = true;
  pthread_t thread;
  auto loop = [](void* self) -> void* {
    static_cast<GuardedAllocator*>(self)->CloserLoop();
    return nullptr;
  };
  if (pthread_create(&thread, nullptr, loop, this) != 0) {
    batched_close_ = false;  // no background thread: close as frees come
    return false;
  }
  pthread_detach(thread);
  return true;
}

namespace {
size_t PrimerCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  return cpus >= static_cast<int>(kCpusPerExtraPrimer) ? kMaxPrimers : 1;
}
}  // namespace

bool GuardedAllocator::StartPrimers() {
  if (primers_started_) return primers_run_;
  primers_started_ = true;
  auto loop = [](void* self) -> void* {
    static_cast<GuardedAllocator*>(self)->PrimerLoop();
    return nullptr;
  };
  for (size_t i = 0, n = PrimerCount(); i < n; i++) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, loop, this) != 0) break;
    pthread_detach(thread);
    primers_run_ = true;
  }
  return primers_run_;
}

bool GuardedAllocator::CheckFreed(SlotRecord* r) {
  CanaryDamage damage = CheckCanary(GeometryOf(*r, page_));
  if (!damage.any()) return true;
  if (!__atomic_exchange_n(&r->canary_reported, 1, __ATOMIC_ACQ_REL) && free_sink_ != nullptr)
    free_sink_(CanaryViolation{*r, damage});
  return false;
}

// Checks freed slots, then closes them: sorted by address, neighbours closed
// as one range (their guard pages are guards already), in one system call
// per kQuarantineChunk slots; then those enter the quarantine, the lock
// taken once per chunk so that allocations get it in between.
void GuardedAllocator::CloseBatch(std::vector<uint32_t>* batch) {
  if (batch->empty()) return;
  for (uint32_t idx : *batch) CheckFreed(RecordOf(idx));
  std::sort(batch->begin(), batch->end(),
            [this](uint32_t a, uint32_t b) { return RecordOf(a)->slot_start < RecordOf(b)->slot_start; });
  std::vector<platform::PageRange> ranges;
  ranges.reserve(std::min(batch->size(), kQuarantineChunk));
  for (size_t from = 0; from < batch->size(); from += kQuarantineChunk) {
    size_t to = std::min(batch->size(), from + kQuarantineChunk);
    ranges.clear();
    uintptr_t run_start = 0, run_end = 0;
    for (size_t i = from; i < to; i++) {
      const SlotRecord& r = *RecordOf((*batch)[i]);
      uintptr_t start = r.slot_start, end = r.slot_start + (static_cast<uintptr_t>(r.data_pages) + 1) * page_;
      if (start == run_end) {
        run_end = end;
        continue;
      }
      if (run_end > run_start) ranges.push_back({reinterpret_cast<void*>(run_start), run_end - run_start});
      run_start = start;
      run_end = end;
    }
    if (run_end > run_start) ranges.push_back({reinterpret_cast<void*>(run_start), run_end - run_start});
    // A failure leaves data readable: still quarantined, never reused early.
    if (guard_method_ == GuardMethod::kMadviseGuard) {
      platform::InstallGuards(ranges.data(), ranges.size());
    } else {
      for (const platform::PageRange& range : ranges) platform::ProtectNone(range.addr, range.bytes);
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = from; i < to; i++) Quarantine((*batch)[i]);
    if (to == batch->size() && --closes_in_flight_ == 0) closed_cv_.notify_all();
  }
}

void GuardedAllocator::TakeClosing(std::vector<uint32_t>* batch) {
  batch->swap(closing_);
  if (!batch->empty()) closes_in_flight_++;
}

void GuardedAllocator::CloserLoop() {
  pthread_setname_np(pthread_self(), "mate-guard-free");
  std::unique_lock<std::mutex> lock(mu_);
  // Kept from batch to batch: swapped with closing_, its capacity is what the
  // next burst of frees fills (each free pushes under the lock, and growing
  // an empty vector to a GC's thousands of frees cost a fifth of Free).
  std::vector<uint32_t> batch;
  for (;;) {
    closer_cv_.wait(lock, [this] { return !closing_.empty(); });
    // Frees come in bursts (a GC sweep): let the burst gather first, which
    // also spares the freeing thread a wake-up per free.
    lock.unlock();
    usleep(kCloseGatherUs);
    lock.lock();
    TakeClosing(&batch);
    lock.unlock();
    CloseBatch(&batch);
    batch.clear();
    lock.lock();
  }
}

bool GuardedAllocator::PrimeWanted() const {
  return (prime_wanted_ && primed_.size() + priming_ < kPrimeTarget) ||
         (prime_zero_wanted_ && primed_zero_.size() + priming_zero_ < kPrimeTarget);
}

void GuardedAllocator::PrimerLoop() {
  pthread_setname_np(pthread_self(), "mate-guard-prep");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    primer_cv_.wait(lock, [this] { return PrimeWanted(); });
    // Both kinds of primed slots, the emptier one first, each while wanted.
    bool canary = prime_wanted_ && primed_.size() + priming_ < kPrimeTarget;
    bool zero = prime_zero_wanted_ && primed_zero_.size() + priming_zero_ < kPrimeTarget;
    if (canary && zero) canary = primed_.size() + priming_ <= primed_zero_.size() + priming_zero_;
    // No slot to be had or opening failed: wanted again at the next allocation.
    if (!PrimeSome(&lock, !canary)) (canary ? prime_wanted_ : prime_zero_wanted_) = false;
  }
}

// Opens up to kPrimeBatch one-page slots (reused ones first) in one system
// call and, outside the lock, faults them in (one more system call) and
// fills their pages with canary bytes, or (zero) leaves them as the kernel
// zeroed them.
bool GuardedAllocator::PrimeSome(std::unique_lock<std::mutex>* lock, bool zero) {
  uint32_t batch[kPrimeBatch];
  size_t n = GatherSlots(kPrimedPages, batch, 0, kPrimeBatch);
  if (n == 0) return false;
  size_t& priming = zero ? priming_zero_ : priming_;
  priming += n;
  lock->unlock();
  platform::PageRange ranges[kPrimeBatch];
  DataRanges(batch, n, ranges);
  bool ok = platform::RemoveGuards(ranges, n);
  if (ok) {
    // Faulted in by the kernel in one call where it can; else first touch.
    bool populated = platform::PopulateWrite(ranges, n);
    for (size_t i = 0; i < n; i++) {
      if (!zero) {
        FillPage(ranges[i].addr, ranges[i].bytes);
        continue;
      }
      if (populated) continue;
      // Fault each page in (the kernel zeroes it); its bytes stay zero.
      for (size_t off = 0; off < ranges[i].bytes; off += page_) static_cast<volatile char*>(ranges[i].addr)[off] = 0;
    }
  } else {
    platform::InstallGuards(ranges, n);
  }
  lock->lock();
  priming -= n;
  std::vector<uint32_t>& ready = zero ? primed_zero_ : primed_;
  std::vector<uint32_t>& reusable = reusable_[kPrimedPages];
  for (size_t i = n; i-- > 0;) (ok ? ready : reusable).push_back(batch[i]);
  // Full: wanted again once allocations take it below kPrimeLow.
  if (ok && ready.size() + priming >= kPrimeTarget) (zero ? prime_zero_wanted_ : prime_wanted_) = false;
  return ok;
}

void GuardedAllocator::FlushFrees() {
  std::vector<uint32_t> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TakeClosing(&batch);
  }
  CloseBatch(&batch);
  // Batches other threads took are checked and closed before this returns:
  // a check right after must see what they find.
  std::unique_lock<std::mutex> lock(mu_);
  closed_cv_.wait(lock, [this] { return closes_in_flight_ == 0; });
}

}  // namespace mate
