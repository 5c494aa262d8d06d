#include "native_heap/site_sampler.h"

namespace mate {
namespace native_heap {

namespace {

// Taken inside malloc and in signal handlers' allocations: no lock behind the atomics.
static_assert(std::atomic<uintptr_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "site table atomics must be lock-free");

// Fibonacci hashing: return addresses differ in their low bits mostly.
inline size_t Hash(uintptr_t site) { return static_cast<size_t>((site * 0x9E3779B97F4A7C15ull) >> 32); }

// 16 Ki sites (256 KiB of zeroed .bss, touched only where sites land):
// SQLite, abseil and libvips addons stay well under it.
constexpr size_t kSites = size_t{1} << 14;
SiteEntry g_entries[kSites];
SiteTable g_table(g_entries, kSites);
uint32_t g_first = 0;

}  // namespace

bool SiteTable::TakeFirst(uintptr_t site, uint32_t first, SiteEntry** entry) {
  if (site == 0 || first == 0) return false;
  size_t i = Hash(site) & mask_;
  for (size_t probe = 0; probe < kMaxProbe && probe <= mask_; probe++, i = (i + 1) & mask_) {
    SiteEntry& e = entries_[i];
    uintptr_t held = e.site.load(std::memory_order_acquire);
    if (held == 0 && e.site.compare_exchange_strong(held, site, std::memory_order_acq_rel)) held = site;
    if (held != site) continue;
    // Read first: once a site has had its K, its line is only ever read
    // (no shared write on the hot path of a busy site).
    if (e.calls.load(std::memory_order_relaxed) >= first) return false;
    if (e.calls.fetch_add(1, std::memory_order_relaxed) >= first) return false;
    *entry = &e;
    return true;
  }
  untracked_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

SiteCoverage SiteTable::Coverage(uint32_t first) const {
  SiteCoverage c;
  c.capacity = mask_ + 1;
  c.untracked_calls = untracked_.load(std::memory_order_relaxed);
  for (size_t i = 0; i <= mask_; i++) {
    const SiteEntry& e = entries_[i];
    if (e.site.load(std::memory_order_acquire) == 0) continue;
    uint32_t calls = e.calls.load(std::memory_order_relaxed);
    c.sites++;
    if (calls >= first) c.reached_first++;
    c.forced += calls < first ? calls : first;
    if (e.missed.load(std::memory_order_relaxed)) c.missed++;
  }
  return c;
}

void ConfigureSites(uint32_t first) { g_first = first; }

uint32_t SiteFirst() { return g_first; }

bool TakeSiteFirst(const void* site, SiteEntry** entry) {
  return g_table.TakeFirst(reinterpret_cast<uintptr_t>(site), g_first, entry);
}

SiteCoverage GetSiteCoverage() { return g_table.Coverage(g_first); }

}  // namespace native_heap
}  // namespace mate
