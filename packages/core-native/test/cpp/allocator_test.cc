// core/: the guarded allocator's contract, in-process.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "check.h"
#include "core/guarded_allocator.h"
#include "crash/describe.h"
#include "platform/linux/machine_context.h"

namespace {

mate::GuardedAllocator* Allocator() {
  static mate::GuardedAllocator* a = [] {
    std::string error;
    mate::Options o;  // the settings table's defaults: tail mode, alignment 16
    o.quarantine_max_bytes = mate::kHostQuarantineBytes;
    mate::GuardedAllocator* made = mate::GuardedAllocator::Create(o, &error);
    if (made == nullptr) fprintf(stderr, "  GuardedAllocator::Create: %s\n", error.c_str());
    return made;
  }();
  return a;
}

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

TEST(tail_mode_puts_the_end_within_alignment_of_the_guard_page) {
  mate::GuardedAllocator* a = Allocator();
  CHECK(a != nullptr);
  mate::AllocResult r = a->Allocate(100, 0);
  CHECK(r.ptr != nullptr);
  CHECK(a->InRegion(Addr(r.ptr)));
  CHECK_EQ(Addr(r.ptr) % 16, 0u);
  uintptr_t page = a->page_size();
  uintptr_t end = Addr(r.ptr) + 100;
  CHECK(((end + page - 1) & ~(page - 1)) - end < 16);  // the gap to the guard page is canary
  size_t size = 0;
  CHECK(a->LiveSize(r.ptr, &size));
  CHECK_EQ(size, 100u);
  CHECK(a->Free(r.ptr, mate::FreedBy::kExplicit, 0).status == mate::FreeStatus::kFreed);
}

TEST(a_second_free_is_a_double_free_and_a_pointer_inside_is_an_invalid_free) {
  mate::GuardedAllocator* a = Allocator();
  mate::AllocResult r = a->Allocate(64, 0);
  char* p = static_cast<char*>(r.ptr);
  CHECK(a->Free(p + 8, mate::FreedBy::kExplicit, 0).status == mate::FreeStatus::kInvalidFree);
  CHECK(a->Free(p, mate::FreedBy::kExplicit, 0).status == mate::FreeStatus::kFreed);
  mate::FreeResult again = a->Free(p, mate::FreedBy::kExplicit, 0);
  CHECK(again.status == mate::FreeStatus::kDoubleFree);
  CHECK_EQ(again.record.size, 64u);
  size_t size = 0;
  CHECK(!a->LiveSize(p, &size));
}

TEST(a_pointer_from_elsewhere_is_not_guarded) {
  mate::GuardedAllocator* a = Allocator();
  void* plain = malloc(32);
  CHECK(!a->InRegion(Addr(plain)));
  CHECK(a->Free(plain, mate::FreedBy::kExplicit, 0).status == mate::FreeStatus::kNotGuarded);
  free(plain);
}

TEST(damage_to_the_canary_before_the_start_is_found_by_a_check) {
  mate::GuardedAllocator* a = Allocator();
  mate::AllocResult r = a->Allocate(48, 0);
  static_cast<volatile char*>(r.ptr)[-1] = 0x5a;  // tail mode: the canary side is before the start
  std::vector<mate::CanaryViolation> found = a->CheckAll();
  CHECK_EQ(found.size(), 1u);
  if (!found.empty()) CHECK_EQ(found[0].record.alloc_id, r.id);
  CHECK(a->CheckAll().empty());  // reported once
}

TEST(a_check_after_a_clean_one_finds_later_damage_to_an_older_allocation_while_few_are_live) {
  mate::GuardedAllocator* a = Allocator();
  a->CheckAll();  // what earlier cases left
  mate::AllocResult older = a->Allocate(64, 0);
  CHECK(a->CheckRecent().empty());  // clean: checked once already
  static_cast<volatile char*>(older.ptr)[-1] = 0x5a;
  std::vector<mate::CanaryViolation> found = a->CheckRecent();
  CHECK_EQ(found.size(), 1u);
  if (!found.empty()) CHECK_EQ(found[0].record.alloc_id, older.id);
  CHECK(a->CheckRecent().empty());  // reported once
}

TEST(frees_in_any_order_leave_every_older_live_allocation_checked) {
  mate::GuardedAllocator* a = Allocator();
  a->CheckAll();
  std::vector<mate::AllocResult> made;
  for (int i = 0; i < 8; i++) made.push_back(a->Allocate(32 + i, 0));
  CHECK(a->CheckRecent().empty());
  // The first, the last and a middle one go: the live list's swaps move the others.
  for (int i : {0, 7, 3}) a->Free(made[i].ptr, mate::FreedBy::kExplicit, 0);
  a->FlushFrees();
  for (int i : {1, 2, 4, 5, 6}) static_cast<volatile char*>(made[i].ptr)[-1] = 0x5a;
  std::vector<mate::CanaryViolation> found = a->CheckRecent();
  CHECK_EQ(found.size(), 5u);
  for (int i : {1, 2, 4, 5, 6}) a->Free(made[i].ptr, mate::FreedBy::kExplicit, 0);
}

TEST(damage_far_from_an_older_allocations_data_is_left_to_a_full_check) {
  mate::GuardedAllocator* a = Allocator();
  a->CheckAll();
  mate::AllocResult older = a->Allocate(64, 0);
  CHECK(a->CheckRecent().empty());
  // Past the near window: an older allocation's check reads only the bytes
  // nearest its data; its free, and the check of every byte, find the rest.
  static_cast<volatile char*>(older.ptr)[-static_cast<int>(mate::GuardedAllocator::kNearCanaryBytes) - 8] = 0x5a;
  CHECK(a->CheckRecent().empty());
  CHECK_EQ(a->CheckAll().size(), 1u);
}

TEST(describe_names_an_overflow_and_a_use_after_free_by_their_distance) {
  mate::GuardedAllocator* a = Allocator();
  mate::AllocResult r = a->Allocate(4096, 0);  // page-sized: the end is exactly the guard page
  mate::Violation v;
  CHECK(mate::DescribeFault(*a, Addr(r.ptr) + 4096, mate::AccessType::kWrite, &v));
  CHECK(v.kind == mate::ReportKind::kHeapBufferOverflow);
  CHECK_EQ(v.distance, 1u);  // the first byte past the end: "1 byte past the end"
  CHECK_EQ(v.record.alloc_id, r.id);
  a->Free(r.ptr, mate::FreedBy::kExplicit, 0);
  a->FlushFrees();
  mate::Violation u;
  CHECK(mate::DescribeFault(*a, Addr(r.ptr) + 10, mate::AccessType::kRead, &u));
  CHECK(u.kind == mate::ReportKind::kHeapUseAfterFree);
  CHECK_EQ(u.distance, 10u);
}

TEST(describe_leaves_addresses_outside_the_region_to_others) {
  mate::GuardedAllocator* a = Allocator();
  int local = 0;
  mate::Violation v;
  CHECK(!mate::DescribeFault(*a, Addr(&local), mate::AccessType::kWrite, &v));
  CHECK(!mate::DescribeFault(*a, 0, mate::AccessType::kWrite, &v));
}

// Native one-page allocations reuse kept slots, whose page keeps what the
// last allocation left: at reuse only its bytes go back to canary when its
// canaries were intact at its free, else the whole page. Every slot is used
// by a 3000-byte allocation (its bytes written, one byte of slack damaged:
// found at its free), then by a 2000-byte one, then a 100-byte one: no
// canary damage may show for those, and an overrun into the slack of a
// reused slot is still found.
TEST(a_reused_kept_slot_is_canary_everywhere_but_the_new_allocation) {
  mate::GuardedAllocator* a = Allocator();
  auto cycle = [&](size_t size, bool check) {
    mate::AllocRequest req;
    req.size = size;
    req.backend = mate::SlotBackend::kNativeHeap;
    mate::AllocResult r = a->Allocate(req);
    if (r.ptr == nullptr) return false;
    memset(r.ptr, 0x11, size);
    if (size == 3000) static_cast<volatile char*>(r.ptr)[-1] = 0x5a;  // found (and reported) at the free
    bool clean = !check || a->CheckRecent().empty();
    mate::FreeRequest f;
    f.ptr = r.ptr;
    f.backend = mate::SlotBackend::kNativeHeap;
    return a->Free(f).status == mate::FreeStatus::kFreed && clean;
  };
  constexpr int kRound = 9000;  // more than the kept slots: every one is reused
  bool ok = true;
  for (int i = 0; i < kRound && ok; i++) ok = cycle(3000, false);
  for (int i = 0; i < kRound && ok; i++) ok = cycle(2000, true);
  for (int i = 0; i < kRound && ok; i++) ok = cycle(100, true);
  CHECK(ok);
  mate::AllocRequest req;
  req.size = 100;
  req.backend = mate::SlotBackend::kNativeHeap;
  mate::AllocResult r = a->Allocate(req);
  CHECK(r.ptr != nullptr);
  static_cast<volatile char*>(r.ptr)[-3] = 0x5a;  // tail mode: into the slack before the start
  std::vector<mate::CanaryViolation> found = a->CheckRecent();
  CHECK_EQ(found.size(), 1u);
  if (!found.empty()) CHECK_EQ(found[0].damage.before.nearest, 3u);
  mate::FreeRequest f;
  f.ptr = r.ptr;
  f.backend = mate::SlotBackend::kNativeHeap;
  CHECK(a->Free(f).status == mate::FreeStatus::kFreed);
}

// JS buffers' one-page slots (host allocations, frees by the collector
// batched as with V8's deleters): primer threads make them ready ahead, all
// canary (small buffers) or zero (over half a page). Either way a buffer
// there is zero over its own bytes and canary over the rest of its page,
// and the slots the collector freed are checked and closed (a stale read
// fails) before any of them can be taken again.
TEST(primed_one_page_slots_are_zero_over_the_buffer_canary_elsewhere_and_closed_once_freed) {
  mate::GuardedAllocator* a = Allocator();
  a->SetBatchedClose(true);  // off with mprotect guard pages: nothing is primed there
  bool priming = a->guard_method() == mate::GuardMethod::kMadviseGuard;
  uint64_t primed_before = a->Stats().primed_allocations;
  std::vector<void*> live;
  bool zeroed = true;
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 64; i++) {
      size_t size = (i & 1) ? 16 : 3000;  // the canary pool and the zero pool
      mate::AllocResult r = a->Allocate(size, 0);
      CHECK(r.ptr != nullptr);
      if (r.ptr == nullptr) return;
      const unsigned char* b = static_cast<const unsigned char*>(r.ptr);
      for (size_t k = 0; k < size; k++) zeroed = zeroed && b[k] == 0;
      memset(r.ptr, 0x42, size);
      live.push_back(r.ptr);
    }
    if (!priming || a->Stats().primed_allocations - primed_before >= 256) break;
    usleep(1000);  // the primers' turn
  }
  CHECK(zeroed);
  if (priming) CHECK(a->Stats().primed_allocations - primed_before >= 256);
  CHECK(a->CheckRecent().empty());  // every byte around the buffers still canary
  for (void* p : live) CHECK(a->Free(p, mate::FreedBy::kGarbageCollector, 0).status == mate::FreeStatus::kFreed);
  a->FlushFrees();
  size_t readable = 0;
  for (void* p : live) {
    char byte;
    if (mate::SafeRead(reinterpret_cast<uintptr_t>(p), &byte, 1)) readable++;
  }
  CHECK_EQ(readable, 0u);
}
