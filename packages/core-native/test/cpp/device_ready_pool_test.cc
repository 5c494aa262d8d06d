// The device allocator's ready-range pool: ranges mapped ahead of requests
// (device_ready_pool.cc), freed ranges handed straight back out when the
// pool runs behind (device_quarantine.cc, recycle_when_behind) and the
// give-back of what the pool holds when the device is short of memory
// (device_memory_pressure.cc), over the simulated CUDA driver (fake_device.h).
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "device/driver/cuda_driver.h"
#include "device/allocator/device_allocator.h"
#include "fake_device.h"

using namespace fake_device;  // NOLINT: the tests' vocabulary

TEST(allocations_of_a_size_seen_before_are_served_from_ranges_mapped_ahead) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  // The first request of a size misses and asks for 4 ranges of its class
  // (one granule: any size up to 2 MiB) to be mapped ahead.
  CUdeviceptr first = d.Alloc(100);
  CHECK(first != 0);
  DeviceStats s = d.a->Stats();
  CHECK_EQ(s.ready_misses, 1u);
  CHECK_EQ(s.ready_hits, 0u);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  std::vector<CUdeviceptr> more;
  for (size_t size : {100u, 4000u, 1u << 20, (2u << 20) - 16}) more.push_back(d.Alloc(size));
  s = d.a->Stats();
  CHECK_EQ(s.ready_hits, 4u);
  CHECK_EQ(s.ready_misses, 1u);
  CHECK_EQ(s.allocations, 5u);
  CHECK_EQ(s.fallbacks, 0u);
  for (CUdeviceptr p : more) {
    CHECK(p != 0);
    CHECK(p != first);
    CHECK_EQ(p % 16, 0u);
  }
  for (CUdeviceptr p : more) CHECK(d.Free(p));
  CHECK(d.Free(first));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(a_range_from_the_pool_keeps_its_canary_windows_damage_past_the_end_is_reported_at_free) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr seen = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  // Both from ranges mapped ahead (canary-filled there, not at allocation).
  CUdeviceptr clean = d.Alloc(100);
  CUdeviceptr damaged = d.Alloc(100);
  CHECK_EQ(d.a->Stats().ready_hits, 2u);
  CHECK(clean != 0 && damaged != 0);
  if (clean == 0 || damaged == 0) return;
  d.Write(clean, 0x00, 100);  // every byte of it, none beyond
  d.Write(damaged, 0x00, 100);
  d.Write(damaged + 100, 0x00, 1);  // one byte past the end, in the alignment gap before the guard
  CHECK(d.Free(clean));
  CHECK_EQ(d.events.Of(ReportKind::kCanaryCorruption).size(), 0u);
  CHECK(d.Free(damaged));  // syncOnFree (the default here): checked in the free
  std::vector<DeviceEvent> found = d.events.Of(ReportKind::kCanaryCorruption);
  CHECK_EQ(found.size(), 1u);
  if (found.size() == 1) {
    CHECK(found[0].has_record);
    CHECK_EQ(found[0].record.user, damaged);
    CHECK_EQ(found[0].record.size, 100u);
    CHECK_EQ(found[0].damage.after.damaged_bytes, 1u);
    CHECK_EQ(found[0].damage.after.nearest, 1u);
    CHECK_EQ(found[0].damage.before.damaged_bytes, 0u);
  }
  CHECK(d.Free(seen));
  CHECK_EQ(d.events.Count(), 1u);
}

// A small allocation's two windows (4 KiB before it, the alignment gap
// after it) lie a few KiB apart: a range mapped ahead for its size is
// filled in one memset over both and the allocation's bytes, and its free
// reads them back in one copy. Its own bytes, read back between the
// windows, are never taken for damage; damage in either window still is.
TEST(a_small_allocations_windows_are_filled_ahead_and_read_back_in_one_span_its_own_bytes_never_damage) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr seen = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CopyCalls before = FakeCopyCalls();
  // Takes the range filled for its size; the one mapped to replace it is
  // filled for that size too.
  CUdeviceptr clean = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CopyCalls after = FakeCopyCalls();
  CHECK_EQ(d.a->Stats().window_fills, 0u);
  CHECK_EQ(after.memsets - before.memsets, 1u);
  CHECK(clean != 0);
  if (clean == 0) return;
  d.Write(clean, 0x00, 100);  // every byte of it, none beyond
  before = FakeCopyCalls();
  CHECK(d.Free(clean));  // syncOnFree: read back and checked in the free
  after = FakeCopyCalls();
  CHECK_EQ(after.dtoh_copies - before.dtoh_copies, 1u);
  CHECK_EQ(d.events.Count(), 0u);
  CUdeviceptr damaged = d.Alloc(100);
  CHECK(damaged != 0);
  if (damaged == 0) return;
  d.Write(damaged, 0x00, 100);
  d.Write(damaged - 4096, 0x00, 1);  // the front window's far byte
  d.Write(damaged + 100, 0x00, 1);   // the gap's first byte
  CHECK(d.Free(damaged));
  std::vector<DeviceEvent> found = d.events.Of(ReportKind::kCanaryCorruption);
  CHECK_EQ(found.size(), 1u);
  if (found.size() == 1) {
    CHECK_EQ(found[0].record.user, damaged);
    CHECK_EQ(found[0].damage.before.damaged_bytes, 1u);
    CHECK_EQ(found[0].damage.before.nearest, 4096u);
    CHECK_EQ(found[0].damage.after.damaged_bytes, 1u);
    CHECK_EQ(found[0].damage.after.nearest, 1u);
  }
  CHECK(d.Free(seen));
  CHECK_EQ(d.events.Count(), 1u);
}

TEST(a_range_mapped_ahead_is_filled_for_the_size_it_replaces_else_where_any_window_of_its_class_can_lie) {
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 128 * kMiB;  // 4 ranges of 3 granules ahead (a class takes a quarter of the budget)
  c.idle_chunk_bytes = 0;               // fresh chunks: no byte holds the fill unless written
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  // The class of three data granules: sizes from 2 granules + 1 byte to 3
  // granules. The miss asks for 4 ranges: one replaces its size, filled for
  // it (a 4 KiB window and the alignment gap); three have no size to
  // replace, filled where any size's windows can lie (the first granule and
  // the gap), not all three granules.
  CUdeviceptr seen = d.Alloc(2 * kGranule + 1);
  CHECK(ReadyBytesReach(d.a, 4 * 3 * kGranule));
  uint64_t filled = d.a->Stats().filled_ahead_bytes;
  CHECK(filled >= 3 * (kGranule - 16) + 4096);
  CHECK(filled <= 3 * (kGranule + 16) + 4096 + 16);
  const size_t sizes[] = {2 * kGranule + 1, 3 * kGranule, 2 * kGranule + kGranule / 2 + 5, 3 * kGranule - 100};
  CUdeviceptr p[4], q[4];
  for (int i = 0; i < 4; i++) p[i] = d.Alloc(sizes[i]);
  // The four taken are replaced, each range filled for one of their sizes.
  CHECK(ReadyBytesReach(d.a, 4 * 3 * kGranule));
  CHECK(d.a->Stats().filled_ahead_bytes - filled <= 4 * (4096 + 16));
  for (int i = 0; i < 4; i++) q[i] = d.Alloc(sizes[i]);
  CHECK_EQ(d.a->Stats().ready_hits, 8u);
  CHECK_EQ(d.a->Stats().window_fills, 0u);  // every one found a range filled for it: none on the caller's thread
  for (int i = 0; i < 4; i++) {
    CHECK(p[i] != 0 && q[i] != 0);
    if (p[i] == 0 || q[i] == 0) return;
    d.Write(p[i], 0x00, sizes[i]);  // every byte of it, none beyond
    d.Write(q[i], 0x00, sizes[i]);
  }
  // The smallest and largest sizes left clean: no report (their windows held the fill).
  for (CUdeviceptr x : {p[0], p[1], q[0], q[1]}) CHECK(d.Free(x));
  CHECK_EQ(d.events.Count(), 0u);
  // The middle size: the window's far byte, 4 KiB before the start, in a
  // range filled for the class and in one filled for that size.
  d.Write(p[2] - 4096, 0x00, 1);
  d.Write(q[2] - 4096, 0x00, 1);
  CHECK(d.Free(p[2]));
  CHECK(d.Free(q[2]));
  // Near the top: the alignment gap after the end.
  d.Write(p[3] + sizes[3], 0x00, 1);
  CHECK(d.Free(p[3]));
  CHECK(d.Free(q[3]));
  std::vector<DeviceEvent> found = d.events.Of(ReportKind::kCanaryCorruption);
  CHECK_EQ(found.size(), 3u);
  if (found.size() == 3) {
    for (int i = 0; i < 2; i++) {
      CHECK_EQ(found[i].record.user, i == 0 ? p[2] : q[2]);
      CHECK_EQ(found[i].damage.before.damaged_bytes, 1u);
      CHECK_EQ(found[i].damage.before.nearest, 4096u);
    }
    CHECK_EQ(found[2].record.user, p[3]);
    CHECK_EQ(found[2].damage.after.damaged_bytes, 1u);
  }
  CHECK(d.Free(seen));
}

TEST(an_allocation_takes_a_range_filled_for_its_size_before_one_filled_for_its_class_which_stays_for_other_sizes) {
  DeviceConfig c = SmallConfig();
  c.idle_chunk_bytes = 0;
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  // The miss of size 100 asks for 4 one-granule ranges: one filled for
  // 100, three for the class.
  std::vector<CUdeviceptr> live{d.Alloc(100)};
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  // Size 200 has no range of its own: it takes one filled for the class,
  // and the one mapped to replace it is filled for 200. The next two
  // allocations of 200 take those, not the two class ranges left.
  for (int i = 0; i < 3; i++) {
    live.push_back(d.Alloc(200));
    CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  }
  // So sizes never seen (300, 400) still find a range filled for them.
  live.push_back(d.Alloc(300));
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  live.push_back(d.Alloc(400));
  DeviceStats s = d.a->Stats();
  CHECK_EQ(s.ready_hits, 5u);
  CHECK_EQ(s.window_fills, 0u);
  for (CUdeviceptr p : live) CHECK(p != 0 && d.Free(p));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(a_freed_range_mapped_ahead_again_keeps_its_last_allocations_history_until_handed_out) {
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 128 * kMiB;
  c.recycle_when_behind = false;        // the freed range is unmapped, not handed straight back
  c.settings.quarantine_max_count = 1;  // and leaves quarantine at the next free, for the pool to map again
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr seen = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CUdeviceptr old = d.Alloc(5000);
  CUdeviceptr other = d.Alloc(kLargeBytes);  // never mapped ahead: its range does not take the freed one's place
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CHECK(old != 0 && d.Free(old));
  CHECK(WaitFor([&] { return FreesSettled(d.a); }));
  CHECK(other != 0 && d.Free(other));  // pushes the freed range out of quarantine
  CHECK(WaitFor([&] { return d.a->Stats().quarantined_bytes == kLargeBytes + kGranule; }));
  // The next range mapped ahead is the freed one, filled for 7000 bytes.
  CUdeviceptr next = d.Alloc(7000);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  // A stale pointer into it still names the allocation it was freed from.
  mate::device::ArgRef a;
  CHECK(d.a->FindArg(old + 10, &a));
  CHECK_EQ(a.user, old);
  CHECK_EQ(a.size, 5000u);
  CHECK_EQ(a.freed, 1);
  for (CUdeviceptr p : {seen, next}) CHECK(p != 0 && d.Free(p));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(the_pool_keeps_at_most_prepare_ahead_ranges_of_a_size) {
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 1024 * kMiB;  // not the bound here
  c.prepare_ahead = 2;
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  // Misses and hits of one class, each asking for more to be mapped ahead.
  std::vector<CUdeviceptr> live;
  uint64_t most = 0;
  for (int i = 0; i < 24; i++) {
    live.push_back(d.Alloc(1000));
    most = std::max(most, PoolBytes(d.a->Stats()));
  }
  CHECK(ReadyBytesReach(d.a, 2 * kGranule));
  most = std::max(most, PoolBytes(d.a->Stats()));  // at least the 2 ready now
  uint64_t hits = d.a->Stats().ready_hits;
  live.push_back(d.Alloc(1000));
  live.push_back(d.Alloc(1000));
  CHECK_EQ(d.a->Stats().ready_hits, hits + 2);
  most = std::max(most, MostPooledOver(d.a, 100));
  CHECK_EQ(most, 2 * kGranule);
  for (CUdeviceptr p : live) CHECK(p != 0 && d.Free(p));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(the_pool_never_holds_more_than_prepare_budget_bytes_over_all_sizes) {
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 16 * kMiB;
  c.prepare_ahead = 64;
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  // Six classes (1 to 6 granules) whose targets together ask for 22
  // granules; the budget is 8.
  std::vector<CUdeviceptr> live;
  uint64_t most = 0;
  for (int round = 0; round < 4; round++) {
    for (uint64_t n = 1; n <= 6; n++) {
      live.push_back(d.Alloc(n * kGranule - 64));
      most = std::max(most, PoolBytes(d.a->Stats()));
    }
    most = std::max(most, MostPooledOver(d.a, 20));
  }
  most = std::max(most, MostPooledOver(d.a, 100));
  CHECK(most > 0);
  CHECK(most <= 16 * kMiB);
  for (CUdeviceptr p : live) CHECK(p != 0 && d.Free(p));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(short_of_memory_the_ranges_kept_ahead_are_given_back_so_a_large_allocation_fits_and_the_pool_stops_asking) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr small = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  // The device keeps 2 granules fewer than the large allocation needs:
  // only the 4 granules mapped ahead make up the difference.
  CUdeviceptr eaten = Squeeze(kLargeBytes - 2 * kGranule);
  CHECK(eaten != 0);
  if (eaten == 0) return;
  CUdeviceptr large = d.Alloc(kLargeBytes);
  CHECK(large != 0);
  DeviceStats s = d.a->Stats();
  CHECK_EQ(s.out_of_memory, 0u);
  CHECK_EQ(s.fallbacks, 0u);
  CHECK_EQ(d.events.Of(ReportKind::kOutOfMemory).size(), 0u);
  // Nothing is mapped ahead again, however long the background thread runs...
  CHECK_EQ(PoolBytes(s), 0u);
  CHECK_EQ(MostPooledOver(d.a, 100), 0u);
  // ...until a size misses again (the device has room once more).
  FakeDriver()->cuMemFree(eaten);
  uint64_t misses = d.a->Stats().ready_misses;
  CUdeviceptr again = d.Alloc(100);
  CHECK_EQ(d.a->Stats().ready_misses, misses + 1);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CHECK(d.Free(again));
  CHECK(large != 0 && d.Free(large));
  CHECK(d.Free(small));
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(short_of_memory_even_after_the_give_back_the_allocation_fails_as_out_of_memory_with_what_was_given_back) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr small = d.Alloc(100);
  CHECK(ReadyBytesReach(d.a, 4 * kGranule));
  CUdeviceptr eaten = Squeeze(0);
  CHECK(eaten != 0);
  if (eaten == 0) return;
  CUdeviceptr p = 0;
  bool guarded = true;
  CHECK_EQ(d.a->Allocate(kLargeBytes, nullptr, 0, &p, &guarded), mate::cuda::kErrorOutOfMemory);
  CHECK_EQ(p, 0u);
  CHECK(!guarded);
  DeviceStats s = d.a->Stats();
  CHECK_EQ(s.out_of_memory, 1u);
  CHECK_EQ(PoolBytes(s), 0u);
  std::vector<DeviceEvent> oom = d.events.Of(ReportKind::kOutOfMemory);
  CHECK_EQ(oom.size(), 1u);
  if (oom.size() == 1) {
    CHECK(oom[0].has_memory);
    CHECK_EQ(oom[0].memory.requested, kLargeBytes);
    CHECK_EQ(oom[0].memory.given_back, 4 * kGranule);
    CHECK_EQ(oom[0].memory.ready_bytes, 0u);
    CHECK_EQ(oom[0].memory.live_count, 1u);
  }
  FakeDriver()->cuMemFree(eaten);
  CHECK(d.Free(small));
}

namespace {

// Bursts of one size class (faster than the background thread maps), half
// of each damaged past its end, all freed; then a burst at another size of
// the class, all clean. A range whose canaries were damaged never comes
// out again (it is unmapped into quarantine, whose bounds are not reached);
// a clean one may (recycle_when_behind), and its windows still hold: the
// clean burst's frees report nothing. Repeated until ranges were recycled
// and handed out again (the pool must run behind for that).
// The background thread's mapping ahead slowed (the simulated driver's
// FAKE_CUDA_BACKGROUND_MAP_DELAY_US) while alive: the pool then runs behind
// the allocations however fast the machine is, so frees recycle.
class SlowMappingAhead {
 public:
  SlowMappingAhead() { setenv("FAKE_CUDA_BACKGROUND_MAP_DELAY_US", "5000", 1); }
  ~SlowMappingAhead() { unsetenv("FAKE_CUDA_BACKGROUND_MAP_DELAY_US"); }
};

void RecycleOnlyCleanRanges(bool sync_on_free, bool* mate_test_failed) {
  SlowMappingAhead slow;
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 256 * kMiB;
  c.prepare_ahead = 32;
  c.sync_on_free = sync_on_free;
  c.reserve_bytes = 4096 * kMiB;         // quarantined ranges keep their address space
  c.behind_ns = 600ull * 1000000000ull;  // behind for the whole test, however slowly it runs
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  constexpr int kBurst = 16;
  std::set<uint64_t> damaged, clean;
  size_t reported = 0, reissued = 0;
  for (int round = 0; round < 40 && (d.a->Stats().recycled == 0 || reissued == 0); round++) {
    // Sizes alternate: a recycled range then holds another size, whose
    // windows lie over the last allocation's data.
    size_t size = round % 2 ? 200 : 100, other = round % 2 ? 100 : 200;
    std::vector<CUdeviceptr> burst;
    for (int i = 0; i < kBurst; i++) burst.push_back(d.Alloc(size));
    for (int i = 0; i < kBurst; i++) {
      CUdeviceptr p = burst[i];
      CHECK(p != 0);
      if (p == 0) return;
      CHECK(damaged.count(RangeOf(p, size)) == 0);
      d.Write(p, 0x00, size);
      if (i % 2) {
        d.Write(p + size, 0x00, 1);
        damaged.insert(RangeOf(p, size));
      } else {
        clean.insert(RangeOf(p, size));
      }
    }
    for (CUdeviceptr p : burst) CHECK(d.Free(p));
    reported += kBurst / 2;
    CHECK(WaitFor([&] { return FreesSettled(d.a); }));
    CHECK_EQ(d.events.Of(ReportKind::kCanaryCorruption).size(), reported);
    std::vector<CUdeviceptr> reuse;
    for (int i = 0; i < kBurst; i++) {
      CUdeviceptr p = d.Alloc(other);
      CHECK(p != 0);
      if (p == 0) return;
      CHECK(damaged.count(RangeOf(p, other)) == 0);
      if (clean.count(RangeOf(p, other))) reissued++;
      clean.insert(RangeOf(p, other));
      d.Write(p, 0x00, other);
      reuse.push_back(p);
    }
    for (CUdeviceptr p : reuse) CHECK(d.Free(p));
    CHECK(WaitFor([&] { return FreesSettled(d.a); }));
    CHECK_EQ(d.events.Of(ReportKind::kCanaryCorruption).size(), reported);
    if (*mate_test_failed) return;
  }
  DeviceStats s = d.a->Stats();
  CHECK(s.recycled > 0);
  CHECK(reissued > 0);
  // Damaged ranges all went to quarantine, unmapped.
  CHECK(s.quarantined >= damaged.size());
  CHECK_EQ(d.events.Count(), reported);
}

}  // namespace

TEST(a_freed_range_goes_back_to_ready_only_when_its_canaries_checked_clean_at_free) {
  RecycleOnlyCleanRanges(true, mate_test_failed);
}

TEST(a_freed_range_goes_back_to_ready_only_when_its_canaries_checked_clean_after_its_last_use) {
  RecycleOnlyCleanRanges(false, mate_test_failed);
}

// A loop allocates the same sizes every step: a freed range recycled at a
// size (its windows checked clean there) goes back out at that size when
// one is asked for, with no canary fill on the caller's thread, even from
// behind ranges recycled at another size. Two bursts live at once, one per
// size, freed in turn; then as many ranges of the second size as its frees
// recycled are asked for. The pool counts as behind for the whole test
// (behind_ns), so frees recycle however slowly the machine runs, and its
// mapping ahead is slowed (SlowMappingAhead), so it stays behind however
// fast the machine runs.
TEST(a_range_recycled_at_a_size_goes_back_out_at_that_size_without_a_canary_fill) {
  SlowMappingAhead slow;
  DeviceConfig c = SmallConfig();
  c.prepare_budget_bytes = 256 * kMiB;
  c.prepare_ahead = 32;
  c.reserve_bytes = 4096 * kMiB;
  c.behind_ns = 600ull * 1000000000ull;
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  constexpr int kBurst = 16;
  uint64_t reissued = 0;
  for (int round = 0; round < 20 && reissued < 16; round++) {
    std::vector<CUdeviceptr> first, second;
    for (int i = 0; i < kBurst; i++) first.push_back(d.Alloc(100));
    for (int i = 0; i < kBurst; i++) second.push_back(d.Alloc(200));
    for (CUdeviceptr p : first) CHECK(p != 0 && d.Free(p));
    CHECK(WaitFor([&] { return FreesSettled(d.a); }));
    uint64_t recycled = d.a->Stats().recycled;
    for (CUdeviceptr p : second) CHECK(p != 0 && d.Free(p));
    CHECK(WaitFor([&] { return FreesSettled(d.a); }));
    uint64_t back = d.a->Stats().recycled - recycled;
    uint64_t fills = d.a->Stats().window_fills;
    std::vector<CUdeviceptr> again;
    for (uint64_t i = 0; i < back; i++) again.push_back(d.Alloc(200));
    CHECK_EQ(d.a->Stats().window_fills, fills);
    reissued += back;
    for (CUdeviceptr p : again) CHECK(p != 0 && d.Free(p));
    CHECK(WaitFor([&] { return FreesSettled(d.a); }));
    if (*mate_test_failed) return;
  }
  CHECK(reissued >= 16);
  CHECK_EQ(d.events.Count(), 0u);
}
