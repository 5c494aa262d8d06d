// native_heap/site_sampler: each call site's first K calls are chosen, then
// none; a full table chooses nothing and counts what it could not take.
#include <thread>
#include <vector>

#include "check.h"
#include "native_heap/site_sampler.h"

using mate::native_heap::SiteCoverage;
using mate::native_heap::SiteEntry;
using mate::native_heap::SiteTable;

TEST(each_site_is_chosen_on_its_first_k_calls_then_never) {
  static SiteEntry entries[64];
  SiteTable table(entries, 64);
  SiteEntry* e = nullptr;
  int chosen_a = 0, chosen_b = 0;
  for (int i = 0; i < 100; i++) {
    chosen_a += table.TakeFirst(0x401000, 4, &e);
    if (i < 2) chosen_b += table.TakeFirst(0x402000, 4, &e);
  }
  CHECK_EQ(chosen_a, 4);
  CHECK_EQ(chosen_b, 2);
  SiteCoverage c = table.Coverage(4);
  CHECK_EQ(c.sites, 2u);
  CHECK_EQ(c.reached_first, 1u);  // b was called twice: both guarded, but fewer than K
  CHECK_EQ(c.forced, 6u);
  CHECK_EQ(c.missed, 0u);
  CHECK_EQ(c.untracked_calls, 0u);
}

TEST(a_chosen_call_that_got_no_slot_leaves_its_site_uncovered) {
  static SiteEntry entries[16];
  SiteTable table(entries, 16);
  SiteEntry* e = nullptr;
  CHECK(table.TakeFirst(0x1234, 2, &e));
  SiteTable::Missed(e);
  CHECK_EQ(table.Coverage(2).missed, 1u);
}

TEST(a_full_table_samples_plainly_and_counts_the_calls_it_could_not_take) {
  static SiteEntry entries[8];
  SiteTable table(entries, 8);
  SiteEntry* e = nullptr;
  for (uintptr_t s = 1; s <= 8; s++) CHECK(table.TakeFirst(s * 0x1000, 1, &e));
  CHECK(!table.TakeFirst(0x99000, 1, &e));
  CHECK(!table.TakeFirst(0x99000, 1, &e));
  SiteCoverage c = table.Coverage(1);
  CHECK_EQ(c.sites, 8u);
  CHECK_EQ(c.untracked_calls, 2u);
}

TEST(threads_racing_on_one_site_choose_exactly_k_of_its_calls) {
  static SiteEntry entries[1024];
  SiteTable table(entries, 1024);
  std::atomic<int> chosen{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; t++)
    pool.emplace_back([&] {
      SiteEntry* e = nullptr;
      for (int i = 0; i < 10000; i++)
        for (uintptr_t s = 1; s <= 50; s++) chosen += table.TakeFirst(0x7f0000000000 + s * 16, 8, &e);
    });
  for (auto& th : pool) th.join();
  CHECK_EQ(chosen.load(), 50 * 8);
  SiteCoverage c = table.Coverage(8);
  CHECK_EQ(c.sites, 50u);
  CHECK_EQ(c.reached_first, 50u);
  CHECK_EQ(c.forced, 400u);
}
