// Kept slots: one-page slots for the native heap whose page survives the
// close. A native free closes its slot before returning (a stale use right
// after it must fault); with guard markers that close frees the page and
// the next allocation faults a new one in (2.0 + 1.2 us here, see
// bench/native/slot-cycle.c). A kept slot's data page is closed with
// mprotect(PROT_NONE) instead, which keeps the page, and opened again with
// mprotect(PROT_READ|PROT_WRITE): no fault, no zeroing. The span of kept
// slots lies in the committed region, laid out as
//   g0 d0 g1 d1 g2 ...   (g: a guard marker, MADV_GUARD_INSTALL)
// A slot is (d_k, g_k+1) in tail mode, (g_k, d_k) in head mode, and is
// closed and opened whole: guard markers stay guards whatever the
// protection of their page, so closed slots next to each other share one
// mapping, and freed kept slots next in line that follow one another are
// opened by one mprotect over the run.
// Bounds: kKeptSlots slots, fewer where vm.max_map_count is low (runs of
// closed and open slots alternate: one mapping a slot at most; their
// pages, 32 MiB, stay resident); when all are made, a new native allocation
// reuses the kept slot freed longest ago, so a kept slot's quarantine is
// every other kept slot not live, less the ones opened ahead (at most
// kKeptSlots - kKeptOpenAhead); when none is free, it takes a regular slot.
#include "core/guarded_allocator.h"
#include "core/slot_batching.h"
#include "platform/guard_pages.h"

namespace mate {

using batching::kKeptOpenAhead;
using batching::kKeptSlots;

bool GuardedAllocator::MakeKeptSpan() {
  // One mapping a slot at most, budgeted as two (the layout before runs
  // shared mappings): at most an eighth of vm.max_map_count, so the program
  // keeps the rest (8,191 slots at the default 65,530).
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
  // Every page of the span is a guard marker already (committed chunks are).
  kept_base_ = base_ + next_page_ * page_;
  next_page_ += span_pages;
  return true;
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
    // The data page loses its guard marker (left there by the chunk) and
    // stays open; the pages around it stay guard markers.
    if (!platform::RemoveGuard(reinterpret_cast<void*>(data), page_)) {
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
  kept_quarantine_.pop_front();
  SlotRecord* r = RecordOf(idx);
  StoreState(r, SlotState::kReusable);
  if (r->open_ahead) {
    r->open_ahead = 0;
    *opened = true;
    return idx;
  }
  // This slot and the next in line whose data pages follow it, opened in
  // one call; the others wait open for their turn. A failure leaves them
  // closed: the caller opens this one alone.
  size_t run = 1;
  uintptr_t end = r->slot_start + 2 * page_;
  while (run < kKeptOpenAhead && run - 1 < kept_quarantine_.size() &&
         RecordOf(kept_quarantine_[run - 1])->slot_start == end) {
    end += 2 * page_;
    run++;
  }
  if (run == 1) return idx;
  if (!platform::ProtectReadWrite(reinterpret_cast<void*>(r->slot_start), end - r->slot_start)) return idx;
  for (size_t i = 0; i + 1 < run; i++) RecordOf(kept_quarantine_[i])->open_ahead = 1;
  *opened = true;
  return idx;
}

}  // namespace mate
