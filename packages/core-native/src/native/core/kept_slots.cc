// Kept slots: one-page slots for the native heap whose page survives the
// close. A native free closes its slot before returning (a stale use right
// after it must fault); with guard markers that close frees the page and
// the next allocation faults a new one in (2.0 + 1.2 us here, see
// bench/native/slot-cycle.c). A kept slot is its own mapping instead,
// between two guard mappings: closing is mprotect(PROT_NONE) of exactly that
// mapping (no split, no merge, the page stays) and opening again is
// mprotect(PROT_READ|PROT_WRITE), with no fault and no zeroing (1.0 + 0.7
// us). The span of kept slots is laid out as
//   g0 d0 g1 d1 g2 ...   (g: guard mapping, PROT_NONE + MADV_DONTDUMP)
// so every data page is flanked by guards whose flags differ from a closed
// data page's. A slot is (d_k, g_k+1) in tail mode, (g_k, d_k) in head mode.
// Bounds: kKeptSlots slots, fewer where vm.max_map_count is low (two
// mappings each; their pages, 32 MiB, stay resident); when all are made, a new native allocation reuses the kept
// slot freed longest ago, so a kept slot's quarantine is every other kept
// slot not live (at most kKeptSlots - 1); when none is free, it takes a
// regular slot.
// Closing by a guard marker instead (keptClose: markers, or auto while
// native allocations come from several threads in turn): the data page's
// mapping stays read-write and a marker makes it fault (no split, no merge,
// the mmap lock taken for reading, so closes from several threads run at
// once); the page is given back, and the next allocation there removes the
// marker and fills the zero page it gets. Measured on 16 quiet cores
// (bench/native/slot-threads.c, CPU per cycle): mprotect 2.6 us from one
// thread, 104 us from 8; markers 4.6 us from one, 12.9 us from 8.
#include <pthread.h>

#include "core/guarded_allocator.h"
#include "core/slot_batching.h"
#include "platform/guard_pages.h"

namespace mate {

using batching::kKeptSlots;

bool GuardedAllocator::MakeKeptSpan() {
  // Two mappings a slot: at most a quarter of vm.max_map_count, so the
  // program keeps the rest (8,191 slots at the default 65,530).
  uint64_t by_maps = platform::MaxMapCount() / 8;
  kept_limit_ = static_cast<uint32_t>(by_maps < kKeptSlots ? by_maps : kKeptSlots);
  if (kept_limit_ < 64) return false;
  size_t span_pages = 2 * static_cast<size_t>(kept_limit_) + 1;
  size_t pages_in_region = region_bytes_ / page_;
  if (next_page_ + span_pages > pages_in_region) return false;
  while (next_page_ + span_pages > committed_pages_) {
    size_t chunk_pages = (64u << 20) / page_;
    void* at = reinterpret_cast<void*>(base_ + committed_pages_ * page_);
    if (!platform::CommitChunk(at, chunk_pages * page_) || !platform::InstallGuard(at, chunk_pages * page_))
      return false;
    committed_pages_ += chunk_pages;
  }
  uintptr_t base = base_ + next_page_ * page_;
  if (!platform::MarkGuardMapping(reinterpret_cast<void*>(base), page_)) return false;  // g0
  next_page_ += span_pages;
  kept_base_ = base;
  return true;
}

void GuardedAllocator::NoteNativeThread() {
  // Auto: a window of 1,024 native allocations, at least 1 in 16 of them
  // from another thread than the one before: threads allocate in turn, and
  // mprotect's closes would wait on each other (and flush each other's
  // CPUs); the next window's kept slots are closed by markers. One thread
  // (or threads taking long turns): mprotect, the cheaper close alone.
  constexpr uint32_t kWindow = 1024, kSwitches = kWindow / 16;
  uintptr_t me = static_cast<uintptr_t>(pthread_self());
  if (me != last_native_thread_) {
    last_native_thread_ = me;
    window_switches_++;
  }
  if (++window_allocations_ < kWindow) return;
  kept_markers_now_ = window_switches_ >= kSwitches;
  window_allocations_ = window_switches_ = 0;
}

uint32_t GuardedAllocator::TakeKeptSlot(bool* opened) {
  *opened = false;
  if (kept_failed_) return 0;
  if ((kept_base_ == 0 || kept_made_ < kept_limit_) && record_count_ + 1 < max_records_) {
    if (kept_base_ == 0 && !MakeKeptSpan()) {
      kept_failed_ = true;
      return 0;
    }
    size_t k = kept_made_;
    uintptr_t data = kept_base_ + (2 * k + 1) * page_;
    uintptr_t guard_after = data + page_;
    // The data page loses its guard marker (left there by the chunk) and
    // stays open; the page after it becomes the next guard mapping.
    if (!platform::RemoveGuard(reinterpret_cast<void*>(data), page_) ||
        !platform::MarkGuardMapping(reinterpret_cast<void*>(guard_after), page_)) {
      kept_failed_ = true;
      return 0;
    }
    uint32_t idx = ++record_count_;
    SlotRecord* r = RecordOf(idx);
    r->slot_start = options_.mode == Mode::kTail ? data : data - page_;
    r->data_pages = 1;
    r->mode = options_.mode;
    r->kept = 1;
    size_t first = (r->slot_start - base_) / page_;
    __atomic_store_n(&page_map_[first], idx, __ATOMIC_RELEASE);
    __atomic_store_n(&page_map_[first + 1], idx, __ATOMIC_RELEASE);
    kept_made_++;
    *opened = true;
    return idx;
  }
  if (kept_quarantine_.empty()) return 0;
  uint32_t idx = kept_quarantine_.front();
  // Its free is still closing it (every other kept slot is live or was
  // taken): a regular slot this time.
  if (__atomic_load_n(&RecordOf(idx)->closing, __ATOMIC_ACQUIRE)) return 0;
  kept_quarantine_.pop_front();
  StoreState(RecordOf(idx), SlotState::kReusable);
  return idx;
}

}  // namespace mate
