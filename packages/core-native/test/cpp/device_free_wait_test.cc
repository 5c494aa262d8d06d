// A free while the GPU runs behind (device_free.cc): the freed range's
// memory pends until its last use has run; past the pending bound (an
// eighth of the device's memory, at least DeviceConfig::pending_max_bytes)
// the next free waits for the GPU, and is counted. Over the simulated CUDA
// driver (fake_device.h), whose events stay not ready while held.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "check.h"
#include "fake_device.h"

using namespace fake_device;  // NOLINT: the tests' vocabulary

namespace {

// The simulated GPU running behind: events recorded meanwhile stay not ready.
bool HoldEvents(int on) {
  auto hold = FakeOnly<void (*)(int)>("fake_cuda_hold_events");
  if (hold) hold(on);
  return hold != nullptr;
}

}  // namespace

TEST(frees_pend_without_waiting_up_to_the_bound_then_the_next_one_waits_for_the_gpu_and_is_counted) {
  DeviceConfig c = SmallConfig();
  c.sync_on_free = false;           // a plain free: no driver call, the background thread fences it
  c.recycle_when_behind = false;    // every freed range pends until unmapped
  c.pending_max_bytes = 64 * kMiB;  // less than an eighth of the simulated 2 GiB device: the bound is 256 MiB
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  constexpr size_t kSize = 32 * kMiB - 4096;  // 16 granules of data: 32 MiB pending per free
  constexpr size_t kUnder = 8;                // 256 MiB pending: at the bound, not past it
  std::vector<CUdeviceptr> p;
  for (size_t i = 0; i < kUnder + 2; i++) p.push_back(d.Alloc(kSize));
  CHECK(std::all_of(p.begin(), p.end(), [](CUdeviceptr x) { return x != 0; }));
  CHECK(HoldEvents(1));
  // Up to the bound the frees return at once (a free that waited would
  // wait until the events are let go: then the check below fails, not hangs).
  std::atomic<bool> under{false};
  std::thread first([&] {
    for (size_t i = 0; i <= kUnder; i++) d.Free(p[i]);  // the last one takes pending past the bound
    under = true;
  });
  bool returned = WaitFor([&] { return under.load(); }, 5000);
  if (!returned) HoldEvents(0);
  first.join();
  CHECK(returned);
  CHECK_EQ(d.a->Stats().free_waits, 0u);
  if (!returned) return;
  std::atomic<bool> done{false};
  std::thread late([&] {
    CHECK(d.Free(p[kUnder + 1]));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(!done.load());  // waiting for the GPU to finish what the pending frees wait on
  CHECK(HoldEvents(0));
  CHECK(WaitFor([&] { return done.load(); }));
  late.join();
  DeviceStats s = d.a->Stats();
  CHECK_EQ(s.free_waits, 1u);
  CHECK(s.free_wait_ns >= 150u * 1000 * 1000);
  CHECK(WaitFor([&] { return FreesSettled(d.a); }));
  CHECK_EQ(d.events.Count(), 0u);  // no report: a correct program's frees
}

// The end of a test (CheckPendingNow, what mate_guard_check_device runs):
// frees still pending, whose fences the background thread cannot see
// complete while the GPU runs behind, are checked after one synchronize
// before it returns, once (the background thread later only unmaps them).
TEST(a_test_end_check_finds_the_damage_of_frees_still_pending_while_the_gpu_runs_behind) {
  DeviceConfig c = SmallConfig();
  c.sync_on_free = false;
  Device d(c);
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr clean = d.Alloc(64), bad = d.Alloc(100);
  CHECK(clean != 0 && bad != 0);
  d.Write(bad + 100, 0x41, 1);  // one byte past the end: canary slack
  CHECK(HoldEvents(1));
  CHECK(d.Free(clean));
  CHECK(d.Free(bad));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_EQ(d.events.Of(ReportKind::kCanaryCorruption).size(), 0u);  // the background thread's fences are not done
  d.a->CheckPendingNow();
  std::vector<DeviceEvent> found = d.events.Of(ReportKind::kCanaryCorruption);
  CHECK_EQ(found.size(), 1u);
  if (found.size() == 1) CHECK_EQ(found[0].record.user, bad);
  CHECK(HoldEvents(0));
  CHECK(WaitFor([&] { return FreesSettled(d.a); }));
  CHECK_EQ(d.events.Of(ReportKind::kCanaryCorruption).size(), 1u);
  CHECK_EQ(d.events.Count(), 1u);
}
