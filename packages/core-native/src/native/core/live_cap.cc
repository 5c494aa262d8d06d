// Collections near the live-allocation cap (mprotect backend). Each live
// slot there costs kernel mappings, so live allocations are capped from
// vm.max_map_count; past the cap an allocation runs unguarded. Short-lived
// JS buffers that outlive a scavenge wait for a full collection to be freed,
// and a loop making them reaches the cap long before the collector runs on
// its own (40,000 of 200,000 ran unguarded in a loop keeping the last 5,000).
// So from three quarters of the cap, or after an allocation fell back (the
// slot count is capped too, and freed slots of one size may all wait for the
// collector while live is low), the JS allocation path asks its engine to
// collect (binding/addon.cc) before allocating. When that frees little
// (the buffers are really live), the next request waits twice as many
// allocations, so a program holding many live buffers pays a collection
// rarely; one that frees plenty goes back to the short wait. And after one
// that freed less than a quarter of the cap, none starts sooner than that
// one took: a program whose buffers stay live near the cap spends at most
// about half its time in collections (allocations in between may fall
// back, counted), while a loop of short-lived buffers is not held back.
#include "core/guarded_allocator.h"

#include <time.h>

namespace mate {

namespace {
uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

bool GuardedAllocator::CollectionDue() const {
  return NowNs() >= __atomic_load_n(&collect_not_before_ns_, __ATOMIC_RELAXED);
}

void GuardedAllocator::InitLiveCapCollections() {
  uint64_t cap = stats_.max_live;
  collect_live_ = cap - cap / 4;
  collect_gap_ = cap / 16 > 0 ? cap / 16 : 1;
  collect_after_ = 0;
}

void GuardedAllocator::Collected(uint64_t live_before, bool ran, uint64_t took_ns) {
  uint64_t now = NowNs();
  std::lock_guard<std::mutex> lock(mu_);
  if (ran) stats_.collections++;
  cap_fallback_ = false;
  uint64_t live = stats_.live;
  uint64_t freed = live_before > live ? live_before - live : 0;
  // Cheap per slot it freed (a quarter of the cap or more): the next may
  // come as soon as it is wanted. Else not sooner than this one took.
  __atomic_store_n(&collect_not_before_ns_, freed >= stats_.max_live / 4 ? 0 : now + took_ns, __ATOMIC_RELAXED);
  uint64_t short_gap = stats_.max_live / 16 > 0 ? stats_.max_live / 16 : 1;
  if (freed >= short_gap / 2) collect_gap_ = short_gap;
  else if (collect_gap_ < 4 * stats_.max_live) collect_gap_ *= 2;
  __atomic_store_n(&collect_after_, stats_.allocations + stats_.fallbacks + collect_gap_, __ATOMIC_RELAXED);
}

}  // namespace mate
