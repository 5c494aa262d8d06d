#ifndef MATE_CORE_GUARDED_ALLOCATOR_H_
#define MATE_CORE_GUARDED_ALLOCATOR_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/free_status.h"
#include "core/canary.h"
#include "core/process_state.h"
#include "core/slot.h"
#include "options/options.h"
#include "platform/guard_pages.h"

namespace mate {

// How a slot's inaccessible pages are made: MADV_GUARD_INSTALL markers (no
// extra kernel mappings) or mprotect(PROT_NONE) (two mappings per slot).
enum class GuardMethod : uint8_t { kMadviseGuard, kMprotect };

inline const char* GuardMethodName(GuardMethod m) {
  return m == GuardMethod::kMadviseGuard ? "madvise-guard" : "mprotect";
}

struct AllocResult {
  void* ptr = nullptr;
  uint64_t id = 0;
  uint32_t record = 0;                    // 0 when unguarded
  size_t mapped = 0;                      // bytes of the slot, guard page included
  const char* fallback_reason = nullptr;  // set when the allocation is unguarded
};

// One allocation request. `alignment` 0 takes the configured alignment; at
// most a page (larger ones fall back, counted).
struct AllocRequest {
  size_t size = 0;
  size_t alignment = 0;
  uint32_t stack_id = 0;   // StackStore string id (JS stack)
  uint32_t frames_id = 0;  // StackStore frames id (native PCs)
  SlotBackend backend = SlotBackend::kHost;
};

// One free. Only an allocation of `backend` may be freed by it: a native
// free of a JS buffer's memory is an invalid free, not a free.
struct FreeRequest {
  void* ptr = nullptr;
  FreedBy by = FreedBy::kExplicit;
  uint32_t stack_id = 0;
  uint32_t frames_id = 0;
  SlotBackend backend = SlotBackend::kHost;
};

struct CanaryViolation {
  SlotRecord record;  // a copy taken when the damage was found
  CanaryDamage damage;
};

struct FreeResult {
  FreeStatus status = FreeStatus::kNotGuarded;
  SlotRecord record{};  // for kFreed / kDoubleFree
};

// Receives canary damage found when a freed slot is checked (before it is
// closed): on the freeing thread, the background closer, or a thread that
// flushes frees. Must be thread-safe.
using FreeViolationSink = void (*)(const CanaryViolation& violation);

struct AllocatorStats {
  uint64_t allocations = 0;  // guarded allocations made
  uint64_t frees = 0;
  uint64_t live = 0;
  uint64_t peak_live = 0;
  uint64_t live_bytes = 0;
  uint64_t fallbacks = 0;           // allocations that could not be guarded
  uint64_t native_allocations = 0;  // of those guarded, native-heap ones
  uint64_t quarantined = 0;
  uint64_t quarantined_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t max_live = 0;              // cap on live allocations (mprotect), 0 = none
  uint64_t collections = 0;           // garbage collections asked for near that cap (live_cap.cc)
  uint64_t kept_marker_closes = 0;    // freed kept slots closed with a guard marker
  uint64_t kept_mprotect_closes = 0;  // freed kept slots closed with mprotect
  uint64_t primed_allocations = 0;    // allocations that took a slot a primer made ready
  GuardMethod guard_method = GuardMethod::kMadviseGuard;
  const char* last_fallback_reason = nullptr;
  // Each reason's own count (reasons are static strings: compared by address).
  static constexpr size_t kMaxReasons = 8;
  struct ReasonCount {
    const char* reason = nullptr;
    uint64_t count = 0;
  } fallback_reasons[kMaxReasons];
};

// Hands out guarded slots from one reserved region. Knows nothing of signals,
// printing or JS; thread-safe (frees may come from any thread).
class GuardedAllocator {
 public:
  // Creates the process-wide allocator once; later calls return it as is.
  static GuardedAllocator* Create(const Options& options, std::string* error);
  static GuardedAllocator* Instance();  // nullptr before Create

  AllocResult Allocate(const AllocRequest& req);
  AllocResult Allocate(size_t size, uint32_t stack_id) {
    AllocRequest req;
    req.size = size;
    req.stack_id = stack_id;
    return Allocate(req);
  }
  FreeResult Free(const FreeRequest& req);
  FreeResult Free(void* ptr, FreedBy by, uint32_t stack_id) {
    FreeRequest req;
    req.ptr = ptr;
    req.by = by;
    req.stack_id = stack_id;
    return Free(req);
  }
  // The requested size of the live allocation starting at `ptr`, or false.
  bool LiveSize(const void* ptr, size_t* size) const;

  // Frees by the garbage collector (FreedBy::kGarbageCollector) arrive in
  // bursts (a GC pause releasing dead buffers), long after the last use:
  // they are checked (canaries) and closed (made inaccessible) in batches by
  // a background thread, adjacent slots in one call, the rest in one
  // process_madvise. Such a slot waits until that thread gets to it (it lets
  // a burst gather for 100 us), the next canary check, or a backlog of
  // 16384; it is never reused before it was closed and quarantined.
  // Explicit frees, and all frees when this is off, check and close their
  // slot before returning. Only with guard markers: with mprotect, every
  // slot waiting open would hold mappings outside the live-allocation cap.
  void SetBatchedClose(bool on) { batched_close_ = on && guard_method_ == GuardMethod::kMadviseGuard; }
  // Where canary damage found at free goes (set once, before allocating).
  void SetFreeViolationSink(FreeViolationSink sink) { free_sink_ = sink; }
  // Closes every freed slot still waiting (tests, checks, reports).
  void FlushFrees();

  // Near the live-allocation cap (mprotect backend; live_cap.cc): whether
  // the caller, able to run its garbage collector, should do so now, before
  // dead buffers it still holds push allocations past the cap. Cheap and
  // without the lock (a stale answer costs one collection early or late).
  bool CollectionWanted() const {
    if (stats_.max_live == 0) return false;
    uint64_t live = __atomic_load_n(&stats_.live, __ATOMIC_RELAXED);
    uint64_t tried =
        __atomic_load_n(&stats_.allocations, __ATOMIC_RELAXED) + __atomic_load_n(&stats_.fallbacks, __ATOMIC_RELAXED);
    return (live >= collect_live_ || __atomic_load_n(&cap_fallback_, __ATOMIC_RELAXED)) &&
           tried >= __atomic_load_n(&collect_after_, __ATOMIC_RELAXED) && CollectionDue();
  }
  // After that collection (`ran`: false where the engine could not be
  // asked, which only spaces out the next request): `live_before` is what
  // live was when it started, `took_ns` how long it took.
  void Collected(uint64_t live_before, bool ran, uint64_t took_ns);

  // Canary checks: of allocations made since the last CheckRecent (still
  // live), or of every live allocation. Violations are reported once.
  // CheckRecent also reads the kNearCanaryBytes nearest the data of every
  // older live allocation while there are at most kCheckAllLiveUpTo (the
  // whole canary only where those show damage): damage a test does to a
  // buffer made before it (a module's, a fixture's, an earlier test's)
  // then fails that test, at a cost bounded per check (bench/README.md,
  // test-end-check.mjs). CheckAll reads every canary byte.
  static constexpr uint64_t kCheckAllLiveUpTo = 4096;
  static constexpr uint64_t kNearCanaryBytes = 64;
  std::vector<CanaryViolation> CheckRecent();
  std::vector<CanaryViolation> CheckAll();

  // Lock-free lookups for the crash handler.
  bool InRegion(uintptr_t addr) const { return addr >= base_ && addr < base_ + region_bytes_; }
  uintptr_t region_base() const { return base_; }
  size_t region_bytes() const { return region_bytes_; }
  const SlotRecord* SlotAt(uintptr_t addr) const;  // slot owning the page, or nullptr
  const SlotRecord* SlotBefore(const SlotRecord& r) const;
  const SlotRecord* SlotAfter(const SlotRecord& r) const;
  SlotGeometry Geometry(const SlotRecord& r) const { return GeometryOf(r, page_); }
  size_t page_size() const { return page_; }

  // The process-wide running test (core/process_state.h), shared with the device guard.
  void SetCurrentTest(uint32_t id) { SetCurrentTestId(id); }
  uint32_t CurrentTest() const { return CurrentTestId(); }

  AllocatorStats Stats();
  // Without the lock, for the crash handler: counters may be a little stale.
  AllocatorStats StatsUnlocked() const { return stats_; }
  std::vector<SlotRecord> LiveRecords();
  const Options& options() const { return options_; }
  GuardMethod guard_method() const { return guard_method_; }

 private:
  GuardedAllocator(const Options& options, uintptr_t base, size_t region_bytes, GuardMethod method);
  uint32_t TakeSlot(uint32_t total_pages, size_t size, SlotBackend backend, bool* opened, bool* primed,
                    const char** reason);                       // under mu_
  uint32_t NewSlot(uint32_t total_pages, const char** reason);  // under mu_
  bool OpenAhead(uint32_t total_pages, uint32_t first);         // under mu_
  // Up to `max` slots into out[n..]: freed ones first, then new. Under mu_.
  size_t GatherSlots(uint32_t total_pages, uint32_t* out, size_t n, size_t max);
  void DataRanges(const uint32_t* slots, size_t n, platform::PageRange* out) const;
  // Makes a slot's data pages accessible (handed out) or not (freed).
  bool SetDataAccess(const SlotRecord& r, bool accessible);
  void TakeClosing(std::vector<uint32_t>* batch);  // under mu_; CloseBatch must follow
  void CloseBatch(std::vector<uint32_t>* batch);   // without mu_ held
  bool CheckFreed(SlotRecord* r);                  // canaries of a freed, still open slot; false: damaged
  void CloserLoop();
  bool StartCloser();  // under mu_; false: no background thread
  // Primer threads (slot_batching.cc): one-page slots made ready ahead of
  // need, apart from the closer, so a burst of frees being closed does not
  // stop them. Started with the first slot wanted; false: none runs.
  void PrimerLoop();
  bool StartPrimers();       // under mu_
  bool PrimeWanted() const;  // under mu_
  // Primes one batch of one-page slots: all canary, or (zero) only faulted
  // in, their page left as the kernel zeroed it. Under mu_ (released meanwhile).
  bool PrimeSome(std::unique_lock<std::mutex>* lock, bool zero);
  void Quarantine(uint32_t index);  // under mu_
  // Kept slots (kept_slots.cc): a native one-page slot whose page survives
  // its close. 0 when none can be had (then a regular slot). Under mu_.
  uint32_t TakeKeptSlot(bool* opened);
  bool MakeKeptSpan();                                    // under mu_
  uint32_t ReuseOldestQuarantined(uint32_t total_pages);  // under mu_; 0 if none
  void CheckInto(const SlotRecord& r, std::vector<CanaryViolation>* out);
  void InitLiveCapCollections();  // live_cap.cc
  SlotRecord* RecordOf(uint32_t index) const { return &records_[index]; }

  const Options options_;
  const size_t page_;
  const uintptr_t base_;
  const size_t region_bytes_;
  const GuardMethod guard_method_;

  uint32_t* page_map_;   // page index in region -> record index (0 = none)
  SlotRecord* records_;  // record 0 unused
  uint32_t max_records_;

  std::mutex mu_;
  uint32_t record_count_ = 0;
  size_t next_page_ = 0;                                          // bump pointer, in pages from base_
  size_t committed_pages_ = 0;                                    // madvise-guard: pages made RW
  std::unordered_map<uint32_t, std::vector<uint32_t>> reusable_;  // total pages -> records
  // Small slots opened ahead in one system call: accessible, zero pages not
  // yet touched, not handed out (total pages -> records).
  std::unordered_map<uint32_t, std::vector<uint32_t>> ready_;
  // One-page slots open and all canary, for the next small allocations.
  std::vector<uint32_t> primed_;
  bool prime_wanted_ = false;
  // One-page slots open, faulted in and still zero, for allocations of more
  // than half a page: they only fill their slack, where a canary page would
  // be zeroed almost whole (and its canary fill was wasted).
  std::vector<uint32_t> primed_zero_;
  bool prime_zero_wanted_ = false;
  // Slots a primer is making ready (taken, not in a pool yet), per pool.
  size_t priming_ = 0, priming_zero_ = 0;
  bool primers_started_ = false;
  bool primers_run_ = false;  // at least one primer thread was started
  std::condition_variable primer_cv_;
  std::deque<uint32_t> quarantine_;
  uintptr_t kept_base_ = 0;   // first page of the kept span, 0 before the first
  uint32_t kept_made_ = 0;    // kept slots made so far (at most kept_limit_)
  uint32_t kept_limit_ = 0;   // kKeptSlots, or fewer for a low vm.max_map_count
  bool kept_failed_ = false;  // the span could not be set up: no kept slots
  // How a freed kept slot is closed (keptClose; kept_slots.cc): mprotect
  // keeps the page but takes the mmap lock for writing (closes from several
  // threads run one at a time, each flushing the others' CPUs); a guard
  // marker takes it for reading and gives the page back. Auto decides per
  // window of native allocations by how often the allocating thread changes.
  enum class KeptClose : uint8_t { kAuto, kMprotect, kMarkers };
  KeptClose kept_close_ = KeptClose::kAuto;
  bool kept_markers_now_ = false;  // auto: this window's choice (under mu_)
  uintptr_t last_native_thread_ = 0;
  uint32_t window_allocations_ = 0, window_switches_ = 0;
  void NoteNativeThread();          // under mu_; auto's window (kept_slots.cc)
  bool CloseKeptByMarker() const {  // under mu_
    return kept_close_ == KeptClose::kMarkers || (kept_close_ == KeptClose::kAuto && kept_markers_now_);
  }
  std::deque<uint32_t> kept_quarantine_;  // freed kept slots, oldest first
  bool batched_close_ = false;
  FreeViolationSink free_sink_ = nullptr;
  std::vector<uint32_t> closing_;  // freed, not closed yet
  size_t closes_in_flight_ = 0;    // batches taken, not yet quarantined
  bool closer_started_ = false;
  std::condition_variable closer_cv_;
  std::condition_variable closed_cv_;
  // Allocations since the last CheckRecent (record, alloc id), at most
  // kMaxRecent (a process that never checks must not grow it forever).
  static constexpr size_t kMaxRecent = 1 << 16;
  std::vector<std::pair<uint32_t, uint64_t>> recent_;
  bool recent_overflow_ = false;
  // The live allocations' records (unordered, under mu_) and each one's
  // place in it, by record: the checks walk the live ones, not every record
  // a long run made (the quarantine alone keeps up to 65,536 more).
  std::vector<uint32_t> live_list_;
  uint32_t* live_pos_ = nullptr;  // a table like records_
  void AddLive(uint32_t idx);     // under mu_
  void RemoveLive(uint32_t idx);  // under mu_
  // Live-cap collections (live_cap.cc): asked for when live reaches
  // collect_live_, or an allocation fell back since the last one, and
  // allocations + fallbacks reach collect_after_.
  uint64_t collect_live_ = 0;
  bool cap_fallback_ = false;
  uint64_t collect_after_ = 0;
  uint64_t collect_gap_ = 0;
  uint64_t collect_not_before_ns_ = 0;  // CLOCK_MONOTONIC
  bool CollectionDue() const;           // live_cap.cc
  AllocatorStats stats_;
};

}  // namespace mate

#endif  // MATE_CORE_GUARDED_ALLOCATOR_H_
