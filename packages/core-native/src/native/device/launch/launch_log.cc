// The tracker's log read back for reports: the launches in flight (or the
// one that faulted), a launch by number, the counters.
#include "device/launch/launch_tracker_state.h"

namespace mate {
namespace device {
namespace tracker {

void ToLaunch(const Entry& e, DeviceLaunch* out) {
  *out = DeviceLaunch{};
  out->number = e.number;
  out->kernel = e.kernel;
  out->stream = reinterpret_cast<uintptr_t>(e.stream);
  out->site = e.site;
  out->test = e.test;
  out->faulted = e.faulted;
  out->arg_count = e.arg_total;
  out->input_count = e.input_count;
  for (uint32_t i = 0; i < e.input_count; i++) out->inputs[i] = e.inputs[i];
  for (uint32_t i = 0; i < e.arg_count; i++) S().hooks.ResolveArg(e.args[i], &out->args[i]);
}

}  // namespace tracker

using tracker::Entry;
using tracker::kRing;
using tracker::S;
using tracker::State;
using tracker::ToLaunch;

void LaunchesForReport(uint64_t exact, std::vector<DeviceLaunch>* out, uint64_t* total, size_t cap) {
  State& st = S();
  std::vector<Entry> picked;
  *total = 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    uint64_t oldest = st.launches > kRing ? st.launches - kRing + 1 : 1;
    for (uint64_t n = st.launches; n >= oldest && n > 0; n--) {
      const Entry& e = st.ring[n % kRing];
      if (e.number != n) continue;
      bool pick = exact ? n == exact : !st.clocks.Finished(e.stream_index, e.seq);
      if (!pick) continue;
      (*total)++;
      if (picked.size() < cap) picked.push_back(e);
    }
    // Launch blocking, the fault seen first elsewhere (the background
    // check): every other launch was waited for, so the one left faulted.
    if (!exact && st.blocking && picked.size() == 1) picked[0].faulted = true;
  }
  out->resize(picked.size());
  for (size_t i = 0; i < picked.size(); i++) ToLaunch(picked[i], &(*out)[i]);
}

bool FindLaunch(uint64_t number, DeviceLaunch* out) {
  State& st = S();
  Entry e;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (number == 0 || st.ring[number % kRing].number != number) return false;
    e = st.ring[number % kRing];
  }
  ToLaunch(e, out);
  return true;
}

TrackerStats GetTrackerStats() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  TrackerStats t = st.stats;
  t.call_ns = __atomic_load_n(&st.call_ns, __ATOMIC_RELAXED);
  LockWaits w = ReadLockWaits(st.lock_waits);
  t.lock_waits = w.waits;
  t.lock_wait_ns = w.ns;
  t.launch_callbacks = __atomic_load_n(&st.launch_callbacks, __ATOMIC_RELAXED);
  t.ordering_callbacks = __atomic_load_n(&st.ordering_callbacks, __ATOMIC_RELAXED);
  t.own_callbacks = __atomic_load_n(&st.own_callbacks, __ATOMIC_RELAXED);
  return t;
}

}  // namespace device
}  // namespace mate
