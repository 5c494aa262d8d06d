#ifndef MATE_NATIVE_HEAP_SITE_SAMPLER_H_
#define MATE_NATIVE_HEAP_SITE_SAMPLER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

// Site-aware sampling (nativeSiteFirst): with nativeSampleRate N > 1, each
// allocation call site (the return address of the replacement, no stack
// walk) is guarded on its first K calls, then sampled one in N like the
// rest. A bug that happens on every call of a site is then caught whatever
// N is; sampling alone would let N-1 of N of them through.
//
// The table is fixed-size open addressing on the return address, all
// atomics: no lock, no allocation (it runs inside malloc, on any thread,
// and in signal handlers' allocations). A site that finds no entry within
// kMaxProbe steps is sampled plainly, and counted.
namespace mate {
namespace native_heap {

struct SiteEntry {
  std::atomic<uintptr_t> site{0};   // 0: empty
  std::atomic<uint32_t> calls{0};   // calls counted; stops being written once it reaches K
  std::atomic<uint32_t> missed{0};  // one of its first K calls got no guarded slot
};

struct SiteCoverage {
  uint64_t sites = 0;            // distinct call sites in the table
  uint64_t reached_first = 0;    // sites called at least K times: guarded on each of the first K
  uint64_t missed = 0;           // sites one of whose first K calls got no slot (went to libc)
  uint64_t forced = 0;           // allocations guarded because they were among their site's first K
  uint64_t untracked_calls = 0;  // calls from sites the full table could not take (sampled plainly)
  uint64_t capacity = 0;         // entries of the table
};

class SiteTable {
 public:
  static constexpr size_t kMaxProbe = 64;

  // `capacity` a power of two; the entries outlive the table.
  constexpr SiteTable(SiteEntry* entries, size_t capacity) : entries_(entries), mask_(capacity - 1) {}

  // Whether this call of `site` is among its first `first` calls (guard it).
  // Sets *entry (for Missed) when it is; a site the table has no room for
  // answers false and is counted.
  bool TakeFirst(uintptr_t site, uint32_t first, SiteEntry** entry);
  // A call TakeFirst chose got no guarded slot: the site is not covered.
  static void Missed(SiteEntry* entry) { entry->missed.store(1, std::memory_order_relaxed); }

  SiteCoverage Coverage(uint32_t first) const;

 private:
  SiteEntry* entries_;
  size_t mask_;
  std::atomic<uint64_t> untracked_{0};
};

// The process's table (the replacements' call sites).
void ConfigureSites(uint32_t first);
uint32_t SiteFirst();  // K; 0 when site-aware sampling is off
bool TakeSiteFirst(const void* site, SiteEntry** entry);
SiteCoverage GetSiteCoverage();

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_SITE_SAMPLER_H_
