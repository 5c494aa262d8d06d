#ifndef MATE_DEVICE_LAUNCH_TRACKER_STATE_H_
#define MATE_DEVICE_LAUNCH_TRACKER_STATE_H_

// The launch tracker's own state, shared by its files (one job each):
// launch_tracker.cc (CUPTI plumbing: the subscription, the callback, the
// ordering calls), launch_record.cc (a launch into the log: its uses of
// guarded memory, launch blocking, the input dump) and launch_log.cc (the
// log read back for reports).
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/driver/cupti.h"
#include "device/launch/kernel_params.h"
#include "device/launch/launch_tracker.h"
#include "device/allocator/guarded_span.h"
#include "device/driver/counted_lock.h"
#include "device/driver/now.h"
#include "device/launch/stream_clocks.h"

namespace mate {
namespace device {
namespace tracker {

using cuda::CUfunction;
using cuda::CUstream;

constexpr size_t kRing = 4096;  // launches remembered
constexpr size_t kArgsKept = kMaxDeviceLaunchArgs;

// A launch writes its entry's header (the fields before args, a cache
// line or two) and the args it found, nothing else: the ring (~3 MB) is
// cold by the time a training step comes back to an entry, and each line
// touched is a miss. Readers read args and inputs only up to their counts.
struct Entry {
  uint64_t number = 0;
  uint32_t kernel = 0;
  uint16_t stream_index = 0;
  bool faulted = false;
  CUstream stream = nullptr;
  uint64_t seq = 0;
  uint32_t site = 0, test = 0;
  uint32_t arg_total = 0;
  uint32_t arg_count = 0;
  uint32_t input_count = 0;  // inputs saved before it (dumpInputs)
  ArgRef args[kArgsKept];
  DeviceLaunchInput inputs[kMaxDeviceLaunchInputs];
};

struct State {
  std::mutex mu;
  const cuda::Driver* drv = nullptr;
  const cupti::Api* api = nullptr;
  cupti::SubscriberHandle sub = nullptr;
  // What the tracker asks the facade (set by StartTracking, before the
  // first callback; read without the lock), beside the flags every launch
  // reads: a launch that finds guarded args touches no other line for it.
  TrackerHooks hooks;
  bool on = false;
  bool stopped = false;
  bool interposed = false;  // the import front-end, not CUPTI (driver_interpose.h)
  std::string via_why;      // why the front-end tried first did not run (TrackingVia)
  bool blocking = false;
  bool faulted_once = false;  // launch blocking: a launch's own synchronize failed already
  std::string off = "the device guard is not installed";
  SiteProvider site = nullptr;
  StreamClocks clocks;  // streams and what each is ordered after
  KernelTable kernels;
  std::unordered_map<uint32_t, bool> dump_match;  // kernel name id -> matches dumpInputs
  // The last launches.
  Entry ring[kRing];
  uint64_t launches = 0;
  TrackerStats stats;
  uint64_t call_ns = 0;  // TrackerStats::call_ns, added with atomics outside the lock
  LockWaits lock_waits;  // TrackerStats::lock_waits
  uint64_t launch_callbacks = 0, ordering_callbacks = 0, own_callbacks = 0;  // atomics
};

// The tracker's lock, on a launching or ordering call's thread (counted).
inline std::unique_lock<std::mutex> Hold(State& st) { return CountedLock(st.mu, &st.lock_waits); }

State& S();

// A launch whose inputs were saved at its entry: its number, call site
// and saved inputs, taken by its exit on the same thread.
struct Pending {
  uint64_t number = 0;
  uint32_t site = 0;
  uint32_t input_count = 0;
  DeviceLaunchInput inputs[kMaxDeviceLaunchInputs];
};
extern thread_local Pending t_pending;

struct Launch {
  CUfunction f = nullptr;
  const char* symbol = nullptr;
  CUstream stream = nullptr;
  bool ptsz = false;
  void** params = nullptr;
  void** extra = nullptr;
};

// Every 8-byte word of a launch's parameters that may point into guarded
// memory, with its parameter and offset: the one walk of a launch's
// parameters (recording its uses, and saving its inputs for dumpInputs).
template <typename Fn>
void ScanWords(const Launch& l, const std::vector<KernelParam>& params, Fn fn) {
  const uint8_t* packed = l.params ? nullptr : ExtraBuffer(l.extra);
  if (!l.params && !packed) return;
  for (size_t p = 0; p < params.size(); p++) {
    const uint8_t* base = l.params ? static_cast<const uint8_t*>(l.params[p]) : packed + params[p].offset;
    if (base == nullptr) continue;
    for (uint32_t off = 0; off + sizeof(uint64_t) <= params[p].size; off += sizeof(uint64_t)) {
      uint64_t v;
      memcpy(&v, base + off, sizeof(v));
      if (InGuardedSpan(v)) fn(static_cast<uint32_t>(p), off, params[p].size, v);
    }
  }
}

// A kernel launch (the rest of what the tracker sees orders work): one
// list for both front-ends.
inline bool IsLaunch(cupti::CallbackId id) {
  namespace dr = cupti::driver;
  return id == dr::kLaunchKernel || id == dr::kLaunchKernelPtsz || id == dr::kLaunchKernelEx ||
         id == dr::kLaunchKernelExPtsz || id == dr::kLaunchCooperativeKernel || id == dr::kLaunchCooperativeKernelPtsz;
}
// A driver call the program made (entry or exit), as CUPTI describes it:
// launches recorded, ordering calls into the stream clocks, sticky errors
// reported. Both front-ends (CUPTI's callback, driver_interpose.h) call it.
void DriverEvent(cupti::CallbackId id, const cupti::CallbackData* cb);
// A launch into the log (at its exit); for dumpInputs, its inputs saved at its entry.
void Record(const Launch& l);
// Tuning (MATE_GUARD_TRACK_SKIP): leave out a record's call site or its guarded arguments.
void SkipParts(bool site, bool args);
void BeforeLaunch(const Launch& l);
// A log entry as a report's launch.
void ToLaunch(const Entry& e, DeviceLaunch* out);

}  // namespace tracker
}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_LAUNCH_TRACKER_STATE_H_
