#include "core/guarded_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "core/slot_batching.h"
#include "platform/guard_pages.h"

namespace mate {

namespace {
GuardedAllocator* g_instance = nullptr;
std::mutex g_create_mu;
constexpr size_t kChunkBytes = 64u << 20;      // committed at a time (madvise-guard)
constexpr size_t kRegionBytes = 128ull << 30;  // address space for slots (costs no memory)
uintptr_t AlignDown(uintptr_t v, uintptr_t a) { return v & ~(a - 1); }

void* MapTable(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
}  // namespace

SlotGeometry GeometryOf(const SlotRecord& r, uintptr_t page) {
  SlotGeometry g{};
  size_t data = static_cast<size_t>(r.data_pages) * page;
  if (r.mode == Mode::kTail) {
    g.data_start = r.slot_start;
    g.data_end = r.slot_start + data;
    g.guard_start = g.data_end;
    g.guard_end = g.guard_start + page;
  } else {
    g.guard_start = r.slot_start;
    g.guard_end = r.slot_start + page;
    g.data_start = g.guard_end;
    g.data_end = g.data_start + data;
  }
  g.user = r.user;
  g.user_end = r.user + r.size;
  if (r.size == 0) {  // zero bytes: the pointer sits on the guard page
    g.canary_before_start = g.canary_before_end = g.user;
    g.canary_after_start = g.canary_after_end = g.user;
    return g;
  }
  g.canary_before_start = g.data_start;
  g.canary_before_end = g.user;
  g.canary_after_start = g.user_end;
  g.canary_after_end = g.data_end;
  return g;
}

GuardedAllocator* GuardedAllocator::Instance() { return __atomic_load_n(&g_instance, __ATOMIC_ACQUIRE); }

GuardedAllocator* GuardedAllocator::Create(const Options& options, std::string* error) {
  std::lock_guard<std::mutex> lock(g_create_mu);
  if (g_instance != nullptr) return g_instance;
  size_t page = platform::PageSize();
  if (options.alignment == 0 || (options.alignment & (options.alignment - 1)) != 0 || options.alignment > page) {
    *error = "alignment must be a power of two from 1 to " + std::to_string(page);
    return nullptr;
  }
  size_t bytes = kRegionBytes;
  void* base = platform::ReserveRegion(bytes);
  if (base == nullptr) {
    *error = "could not reserve " + std::to_string(bytes >> 20) + " MiB of address space";
    return nullptr;
  }
  GuardMethod method =
      (!options.force_mprotect && platform::HasGuardInstall()) ? GuardMethod::kMadviseGuard : GuardMethod::kMprotect;
  auto* a = new GuardedAllocator(options, reinterpret_cast<uintptr_t>(base), bytes, method);
  if (a->page_map_ == nullptr || a->records_ == nullptr) {
    *error = "could not map the allocator's tables";
    return nullptr;
  }
  __atomic_store_n(&g_instance, a, __ATOMIC_RELEASE);
  return a;
}

GuardedAllocator::GuardedAllocator(const Options& options, uintptr_t base, size_t region_bytes, GuardMethod method)
    : options_(options), page_(platform::PageSize()), base_(base), region_bytes_(region_bytes), guard_method_(method) {
  size_t pages = region_bytes_ / page_;
  page_map_ = static_cast<uint32_t*>(MapTable(pages * sizeof(uint32_t)));
  max_records_ = static_cast<uint32_t>(pages > 0xFFFFFFF0u ? 0xFFFFFFF0u : pages);
  records_ = static_cast<SlotRecord*>(MapTable(static_cast<size_t>(max_records_) * sizeof(SlotRecord)));
  live_pos_ = static_cast<uint32_t*>(MapTable(static_cast<size_t>(max_records_) * sizeof(uint32_t)));
  stats_.guard_method = method;
  // Validated by the settings table (keptClose): auto, mprotect or markers.
  if (options.kept_close == "mprotect") kept_close_ = KeptClose::kMprotect;
  else if (options.kept_close == "markers") kept_close_ = KeptClose::kMarkers;
  stats_.reserved_bytes = region_bytes_;
  if (method == GuardMethod::kMprotect) {
    uint64_t cap = options.max_live_mprotect;
    if (cap == 0) {
      // Each live slot costs up to two mappings; leave most of the map count
      // to Node and the program under test.
      uint64_t maps = platform::MaxMapCount();
      cap = maps > 20000 ? (maps - 20000) / 2 : 1000;
    }
    stats_.max_live = cap;
    InitLiveCapCollections();
  }
}

const SlotRecord* GuardedAllocator::SlotAt(uintptr_t addr) const {
  if (!InRegion(addr)) return nullptr;
  uint32_t idx = __atomic_load_n(&page_map_[(addr - base_) / page_], __ATOMIC_ACQUIRE);
  return idx == 0 ? nullptr : &records_[idx];
}

const SlotRecord* GuardedAllocator::SlotBefore(const SlotRecord& r) const {
  if (r.slot_start <= base_) return nullptr;
  return SlotAt(r.slot_start - 1);
}

const SlotRecord* GuardedAllocator::SlotAfter(const SlotRecord& r) const {
  return SlotAt(r.slot_start + (static_cast<uintptr_t>(r.data_pages) + 1) * page_);
}

uint32_t GuardedAllocator::TakeSlot(uint32_t total_pages, size_t size, SlotBackend backend, bool* opened, bool* primed,
                                    const char** reason) {
  *opened = false;
  *primed = false;
  // Native one-page allocations take kept slots (kept_slots.cc): their
  // close keeps the page, so reuse needs no fault.
  if (backend == SlotBackend::kNativeHeap && total_pages == 2 && guard_method_ == GuardMethod::kMadviseGuard) {
    uint32_t idx = TakeKeptSlot(opened);
    if (idx != 0) return idx;
  }
  // Native frees close their slot at once (a stale use may follow at once):
  // each close flushes the TLB of every CPU running one of our threads, so
  // native code does not wake the primer, whose page faults on the other
  // CPU would turn every such close into a cross-CPU flush (5.4 us instead
  // of 2.1 us per close here). It opens its slots in batches (OpenAhead).
  if (total_pages == batching::kPrimedPages && batched_close_ && guard_method_ == GuardMethod::kMadviseGuard &&
      backend != SlotBackend::kNativeHeap) {
    // More than half a page: a zero page and a canary slack cost less to
    // make ready than a canary page zeroed almost whole.
    bool zero = size > page_ / 2;
    std::vector<uint32_t>& pool = zero ? primed_zero_ : primed_;
    bool& wanted = zero ? prime_zero_wanted_ : prime_wanted_;
    if (pool.size() < batching::kPrimeLow && !wanted && StartPrimers()) {
      wanted = true;
      primer_cv_.notify_all();
    }
    if (!pool.empty()) {
      uint32_t idx = pool.back();
      pool.pop_back();
      *opened = true;
      *primed = !zero;  // a zero page is filled like a fresh one
      stats_.primed_allocations++;
      return idx;
    }
  }
  auto ready = ready_.find(total_pages);
  if (ready != ready_.end() && !ready->second.empty()) {
    uint32_t idx = ready->second.back();
    ready->second.pop_back();
    *opened = true;
    return idx;
  }
  uint32_t idx = 0;
  auto it = reusable_.find(total_pages);
  if (it != reusable_.end() && !it->second.empty()) {
    idx = it->second.back();
    it->second.pop_back();
  } else if (stats_.max_live != 0 && record_count_ >= stats_.max_live) {
    // mprotect: every slot ever made may hold two mappings, freed or not
    // (closed neighbours do not always merge back), so the cap bounds the
    // slots too: the oldest freed slot of this size is reused early.
    idx = ReuseOldestQuarantined(total_pages);
    if (idx == 0) {
      *reason = "the live-allocation cap for mprotect guard pages (vm.max_map_count) was reached";
      return 0;
    }
  } else {
    idx = NewSlot(total_pages, reason);
    if (idx == 0) return 0;
  }
  if (guard_method_ == GuardMethod::kMadviseGuard && total_pages <= batching::kOpenAheadMaxPages)
    *opened = OpenAhead(total_pages, idx);
  return idx;
}

uint32_t GuardedAllocator::NewSlot(uint32_t total_pages, const char** reason) {
  size_t pages_in_region = region_bytes_ / page_;
  if (next_page_ + total_pages > pages_in_region || record_count_ + 1 >= max_records_) {
    *reason = "the guarded region is full (regionBytes)";
    return 0;
  }
  if (guard_method_ == GuardMethod::kMadviseGuard) {
    while (next_page_ + total_pages > committed_pages_) {
      size_t chunk_pages = kChunkBytes / page_;
      void* at = reinterpret_cast<void*>(base_ + committed_pages_ * page_);
      // Fresh pages start as guards, so a stray access anywhere in the
      // region faults, not only in slots handed out.
      if (!platform::CommitChunk(at, kChunkBytes) || !platform::InstallGuard(at, kChunkBytes)) {
        *reason = "committing guarded address space failed";
        return 0;
      }
      committed_pages_ += chunk_pages;
    }
  }
  uint32_t idx = ++record_count_;
  SlotRecord* r = RecordOf(idx);
  r->slot_start = base_ + next_page_ * page_;
  r->data_pages = total_pages - 1;
  r->mode = options_.mode;  // fixes where the data pages are
  for (size_t p = 0; p < total_pages; p++) __atomic_store_n(&page_map_[next_page_ + p], idx, __ATOMIC_RELEASE);
  next_page_ += total_pages;
  return idx;
}

bool GuardedAllocator::SetDataAccess(const SlotRecord& r, bool accessible) {
  SlotGeometry g = GeometryOf(r, page_);
  void* data = reinterpret_cast<void*>(g.data_start);
  size_t bytes = g.data_end - g.data_start;
  if (r.kept && r.closed_by_marker)
    return accessible ? platform::RemoveGuard(data, bytes) : platform::InstallGuard(data, bytes);
  if (r.kept) return accessible ? platform::ProtectReadWrite(data, bytes) : platform::ProtectNoneKeep(data, bytes);
  if (guard_method_ == GuardMethod::kMadviseGuard)
    return accessible ? platform::RemoveGuard(data, bytes) : platform::InstallGuard(data, bytes);
  return accessible ? platform::ProtectReadWrite(data, bytes) : platform::ProtectNone(data, bytes);
}

AllocResult GuardedAllocator::Allocate(const AllocRequest& req) {
  AllocResult res;
  const size_t size = req.size;
  const size_t alignment = req.alignment ? req.alignment : options_.alignment;
  uint64_t data_pages64 = (static_cast<uint64_t>(size) + page_ - 1) / page_;
  const char* reason = nullptr;
  uint32_t idx = 0;
  bool opened = false, primed = false;
  uint64_t last_id = 0;  // the slot's previous allocation, for its history should opening fail
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (data_pages64 + 1 > 0xFFFFFFFFull) {
      reason = "the allocation is larger than a slot can be";
    } else if (alignment > page_ || (alignment & (alignment - 1)) != 0) {
      reason = "the requested alignment is larger than a page";
    } else if (stats_.max_live != 0 && stats_.live >= stats_.max_live) {
      reason = "the live-allocation cap for mprotect guard pages (vm.max_map_count) was reached";
    } else {
      idx = TakeSlot(static_cast<uint32_t>(data_pages64 + 1), size, req.backend, &opened, &primed, &reason);
    }
    if (req.backend == SlotBackend::kNativeHeap && kept_close_ == KeptClose::kAuto) NoteNativeThread();
    if (idx != 0) {
      stats_.live++;  // reserve the place under the cap before unlocking
      AddLive(idx);
      res.id = NextAllocationId();  // one numbering for every backend
      // The rest of the bookkeeping here too (one lock per allocation),
      // taken back below should opening the slot fail. The id is on the
      // record first: CheckRecent tells a slot not handed out yet from a
      // freed one by it.
      last_id = RecordOf(idx)->alloc_id;
      RecordOf(idx)->alloc_id = res.id;
      stats_.allocations++;
      if (req.backend == SlotBackend::kNativeHeap) stats_.native_allocations++;
      stats_.live_bytes += size;
      if (stats_.live > stats_.peak_live) stats_.peak_live = stats_.live;
      if (recent_.size() < kMaxRecent) recent_.emplace_back(idx, res.id);
      else recent_overflow_ = true;  // the next CheckRecent checks every live allocation
    }
  }
  SlotRecord* r = idx ? RecordOf(idx) : nullptr;
  // A reused kept slot's page: all canary but its last allocation's bytes.
  uintptr_t last_user = 0;
  size_t last_size = 0;
  bool refill_last = false;
  bool zero_page = false;  // a kept slot closed by a guard marker: its page comes back zero
  if (r != nullptr) {
    refill_last = r->kept && r->canary_intact && !opened;
    zero_page = r->kept && r->closed_by_marker && !opened;
    last_user = r->user;
    last_size = static_cast<size_t>(r->size);
    r->canary_intact = 0;
    r->size = size;
    r->mode = options_.mode;
    r->alignment = static_cast<uint16_t>(alignment);
    r->backend = req.backend;
    SlotGeometry g0 = GeometryOf(*r, page_);
    // Page-aligned data start: aligning down stays inside the data pages.
    r->user = size == 0 ? g0.guard_start
                        : (r->mode == Mode::kTail ? AlignDown(g0.guard_start - size, alignment) : g0.data_start);
    if (!opened && !SetDataAccess(*r, true)) {
      reason = "opening a guarded slot failed (madvise/mprotect)";
      std::lock_guard<std::mutex> lock(mu_);
      stats_.live--;
      RemoveLive(idx);
      stats_.allocations--;
      if (req.backend == SlotBackend::kNativeHeap) stats_.native_allocations--;
      stats_.live_bytes -= size;
      r->alloc_id = last_id;  // its history back; its entry in recent_ is dropped (another id)
      if (r->kept) {          // closed still, its page as it was: the next to take
        r->user = last_user;
        r->size = last_size;
        r->canary_intact = refill_last;
        kept_quarantine_.push_front(idx);
      } else {
        reusable_[r->data_pages + 1].push_back(idx);
      }
      r = nullptr;
    }
  }
  if (r == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.fallbacks++;
    // mprotect: freed slots of this size may wait for the collector (the
    // slot count is capped too): ask for a collection (live_cap.cc).
    if (stats_.max_live != 0) __atomic_store_n(&cap_fallback_, true, __ATOMIC_RELAXED);
    if (reason == nullptr) reason = "no guarded slot could be taken";
    stats_.last_fallback_reason = reason;
    for (AllocatorStats::ReasonCount& rc : stats_.fallback_reasons) {
      if (rc.reason != nullptr && rc.reason != reason) continue;
      rc.reason = reason;
      rc.count++;
      break;
    }
    res.fallback_reason = reason;
    return res;
  }
  SlotGeometry g = GeometryOf(*r, page_);
  if (refill_last) {
    // The page comes back cold after every other kept slot was used: a
    // whole-page fill here stalls on 64 cache-line misses (measured:
    // bench/README.md, native heap); the check at the free reads it anyway.
    // Only where the new allocation does not cover (it is zeroed next).
    uintptr_t last_end = last_user + last_size;
    if (last_user < g.user)
      memset(reinterpret_cast<void*>(last_user), kCanaryByte, (last_end < g.user ? last_end : g.user) - last_user);
    if (last_end > g.user_end) {
      uintptr_t from = last_user > g.user_end ? last_user : g.user_end;
      memset(reinterpret_cast<void*>(from), kCanaryByte, last_end - from);
    }
    if (size != 0) memset(reinterpret_cast<void*>(g.user), 0, size);
  } else if (primed || r->kept) {
    // Primed: all canary already. Kept: the page still holds its last
    // allocation, or is zero (closed by a marker). Either way the
    // allocation's own bytes become zero, and a kept page canary around them.
    if (size != 0 && !zero_page) memset(reinterpret_cast<void*>(g.user), 0, size);
    if (r->kept) FillCanary(g);
  } else {
    FillCanary(g);
  }
  r->alloc_stack = req.stack_id;
  r->alloc_frames = req.frames_id;
  r->alloc_test = CurrentTest();
  r->free_stack = 0;
  r->free_frames = 0;
  r->free_test = 0;
  r->freed_by = FreedBy::kNotFreed;
  r->canary_reported = 0;
  StoreState(r, SlotState::kLive);
  res.ptr = reinterpret_cast<void*>(r->user);
  res.record = idx;
  res.mapped = (static_cast<size_t>(r->data_pages) + 1) * page_;
  return res;
}

bool GuardedAllocator::LiveSize(const void* ptr, size_t* size) const {
  uintptr_t addr = reinterpret_cast<uintptr_t>(ptr);
  const SlotRecord* r = SlotAt(addr);
  if (r == nullptr || r->user != addr || LoadState(*r) != SlotState::kLive) return false;
  *size = static_cast<size_t>(r->size);
  return true;
}

FreeResult GuardedAllocator::Free(const FreeRequest& req) {
  FreeResult res;
  const FreedBy by = req.by;
  uintptr_t addr = reinterpret_cast<uintptr_t>(req.ptr);
  if (!InRegion(addr)) return res;  // kNotGuarded: a fallback allocation
  const SlotRecord* found = SlotAt(addr);
  if (found == nullptr || found->user != addr ||
      (LoadState(*found) != SlotState::kNever && found->backend != req.backend)) {
    res.status = FreeStatus::kInvalidFree;
    if (found) res.record = *found;
    return res;
  }
  SlotRecord* r = const_cast<SlotRecord*>(found);
  // Live -> quarantined under the lock: canary checks only read live slots
  // (under the same lock), and nothing reuses the slot before it is closed
  // and has passed the quarantine, so its canaries can be checked unlocked.
  std::unique_lock<std::mutex> lock(mu_);
  uint8_t expected = static_cast<uint8_t>(SlotState::kLive);
  if (!__atomic_compare_exchange_n(&r->state, &expected, static_cast<uint8_t>(SlotState::kQuarantined), false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    res.status = FreeStatus::kDoubleFree;
    res.record = *r;
    return res;
  }
  stats_.frees++;
  stats_.live--;
  RemoveLive(static_cast<uint32_t>(r - records_));
  stats_.live_bytes -= r->size;
  r->freed_by = by;
  r->free_stack = req.stack_id;
  r->free_frames = req.frames_id;
  r->free_test = CurrentTest();
  res.status = FreeStatus::kFreed;
  res.record = *r;
  uint32_t idx = static_cast<uint32_t>(r - records_);
  // An explicit free (native code) may be followed at once by a stale use:
  // it closes its slot before returning. GC frees come in bursts, long
  // after the last use: they are batched.
  if (r->kept) {
    // Queued for reuse now (one lock per free), taken only once closed
    // (TakeKeptSlot); the kept pool is its own quarantine (kept_slots.cc).
    __atomic_store_n(&r->closing, 1, __ATOMIC_RELAXED);
    kept_quarantine_.push_back(idx);
    // How it is closed is its own until it is opened again (SetDataAccess).
    r->closed_by_marker = CloseKeptByMarker();
    (r->closed_by_marker ? stats_.kept_marker_closes : stats_.kept_mprotect_closes)++;
    lock.unlock();
    bool intact = CheckFreed(r);
    // A failure leaves the data readable: reused only after every other
    // kept slot, and then filled whole (a stale write may have landed).
    bool closed = SetDataAccess(*r, false);
    // A marker gives the page back: the next allocation fills it whole. A
    // marker that failed left the page as it was, read-write: not a zero page.
    if (!closed) r->closed_by_marker = 0;
    r->canary_intact = intact && closed && !r->closed_by_marker;
    __atomic_store_n(&r->closing, 0, __ATOMIC_RELEASE);
    return res;
  }
  if (!batched_close_ || by != FreedBy::kGarbageCollector) {
    lock.unlock();
    CheckFreed(r);
    SetDataAccess(*r, false);  // a failure leaves the data readable: still quarantined, never reused early
    lock.lock();
    Quarantine(idx);
    return res;
  }
  closing_.push_back(idx);
  if (closing_.size() >= batching::kCloseBackstop) {
    std::vector<uint32_t> batch;
    TakeClosing(&batch);
    lock.unlock();
    CloseBatch(&batch);
    return res;
  }
  if (closing_.size() == 1) {
    if (!StartCloser()) {
      std::vector<uint32_t> batch;
      TakeClosing(&batch);
      lock.unlock();
      CloseBatch(&batch);
      return res;
    }
    closer_cv_.notify_one();
  }
  return res;
}

void GuardedAllocator::Quarantine(uint32_t index) {
  SlotRecord* r = RecordOf(index);
  if (r->kept) {  // the kept pool is its own quarantine (kept_slots.cc)
    kept_quarantine_.push_back(index);
    return;
  }
  quarantine_.push_back(index);
  stats_.quarantined++;
  stats_.quarantined_bytes += static_cast<uint64_t>(r->data_pages) * page_;
  while (!quarantine_.empty() && (stats_.quarantined > options_.quarantine_max_count ||
                                  stats_.quarantined_bytes > options_.quarantine_max_bytes)) {
    uint32_t old = quarantine_.front();
    quarantine_.pop_front();
    SlotRecord* o = RecordOf(old);
    stats_.quarantined--;
    stats_.quarantined_bytes -= static_cast<uint64_t>(o->data_pages) * page_;
    // Still inaccessible; only the bookkeeping changes. Its history stays
    // for use-after-free reports until the slot is handed out again.
    StoreState(o, SlotState::kReusable);
    reusable_[o->data_pages + 1].push_back(old);
  }
}

uint32_t GuardedAllocator::ReuseOldestQuarantined(uint32_t total_pages) {
  for (auto q = quarantine_.begin(); q != quarantine_.end(); ++q) {
    SlotRecord* o = RecordOf(*q);
    if (o->data_pages + 1 != total_pages) continue;
    uint32_t idx = *q;
    quarantine_.erase(q);
    stats_.quarantined--;
    stats_.quarantined_bytes -= static_cast<uint64_t>(o->data_pages) * page_;
    StoreState(o, SlotState::kReusable);
    return idx;
  }
  return 0;
}

void GuardedAllocator::AddLive(uint32_t idx) {
  live_pos_[idx] = static_cast<uint32_t>(live_list_.size());
  live_list_.push_back(idx);
}

void GuardedAllocator::RemoveLive(uint32_t idx) {
  uint32_t pos = live_pos_[idx];
  uint32_t last = live_list_.back();
  live_list_[pos] = last;
  live_pos_[last] = pos;
  live_list_.pop_back();
}

void GuardedAllocator::CheckInto(const SlotRecord& r, std::vector<CanaryViolation>* out) {
  CanaryDamage damage = CheckCanary(GeometryOf(r, page_));
  if (!damage.any()) return;
  SlotRecord* m = const_cast<SlotRecord*>(&r);
  if (__atomic_exchange_n(&m->canary_reported, 1, __ATOMIC_ACQ_REL)) return;
  out->push_back(CanaryViolation{r, damage});
}

std::vector<CanaryViolation> GuardedAllocator::CheckRecent() {
  bool overflow, older;
  {
    std::lock_guard<std::mutex> lock(mu_);
    overflow = recent_overflow_;  // more allocations than the list keeps since the last check
    older = stats_.live <= kCheckAllLiveUpTo;
  }
  if (overflow) return CheckAll();
  FlushFrees();
  std::vector<std::pair<uint32_t, uint64_t>> recent;
  {
    std::lock_guard<std::mutex> lock(mu_);
    recent.swap(recent_);
  }
  std::vector<CanaryViolation> out;
  std::vector<std::pair<uint32_t, uint64_t>> not_yet;  // made, not handed out yet: the next check
  for (auto& [idx, id] : recent) {
    // A frees-then-reuse race is excluded by the id: only the allocation
    // that was made since the last check is looked at, and only while live.
    const SlotRecord& r = *RecordOf(idx);
    std::lock_guard<std::mutex> lock(mu_);  // see Free
    if (r.alloc_id != id) continue;
    SlotState state = LoadState(r);
    if (state == SlotState::kLive) CheckInto(r, &out);
    else if (state != SlotState::kQuarantined) not_yet.emplace_back(idx, id);
  }
  if (!not_yet.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& e : not_yet) {
      if (recent_.size() < kMaxRecent) recent_.push_back(e);
      else recent_overflow_ = true;
    }
  }
  if (older) {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t i : live_list_) {
      const SlotRecord& r = *RecordOf(i);
      if (LoadState(r) != SlotState::kLive || __atomic_load_n(&r.canary_reported, __ATOMIC_ACQUIRE)) continue;
      if (!NearCanaryIntact(GeometryOf(r, page_), kNearCanaryBytes)) CheckInto(r, &out);
    }
  }
  return out;
}

std::vector<CanaryViolation> GuardedAllocator::CheckAll() {
  FlushFrees();
  std::vector<CanaryViolation> out;
  std::lock_guard<std::mutex> lock(mu_);
  // Made but not handed out yet (another thread between the two): the
  // next check's, as in CheckRecent.
  auto checked_now = [&](const std::pair<uint32_t, uint64_t>& e) {
    const SlotRecord& r = *RecordOf(e.first);
    SlotState state = LoadState(r);
    return r.alloc_id != e.second || state == SlotState::kLive || state == SlotState::kQuarantined;
  };
  recent_.erase(std::remove_if(recent_.begin(), recent_.end(), checked_now), recent_.end());
  recent_overflow_ = false;
  for (uint32_t i : live_list_) {
    const SlotRecord& r = *RecordOf(i);
    if (LoadState(r) == SlotState::kLive) CheckInto(r, &out);
  }
  return out;
}

AllocatorStats GuardedAllocator::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::vector<SlotRecord> GuardedAllocator::LiveRecords() {
  std::vector<SlotRecord> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t i = 1; i <= record_count_; i++)
    if (LoadState(*RecordOf(i)) == SlotState::kLive) out.push_back(*RecordOf(i));
  // Records are reused out of order: list by allocation number.
  std::sort(out.begin(), out.end(), [](const SlotRecord& a, const SlotRecord& b) { return a.alloc_id < b.alloc_id; });
  return out;
}

}  // namespace mate
