#ifndef MATE_DEVICE_LAUNCH_TRACKER_H_
#define MATE_DEVICE_LAUNCH_TRACKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "report/device_detail.h"
#include "device/allocator/launch_use.h"
#include "device/driver/cuda_driver.h"
#include "device/driver/internal_calls.h"
#include "device/launch/tracker_hooks.h"
#include "options/options.h"

// Launch tracking (while the device guard is on): through NVIDIA's CUPTI
// callback API, every kernel launch (the driver API, which the CUDA
// runtime's launches reach too: Triton's launcher and PyTorch's kernels
// alike) is recorded with its kernel name,
// stream, call site, and the parameters that point into guarded
// allocations (layout from the driver's cuFuncGetParamInfo); event records,
// stream waits and synchronizations keep a vector clock per stream, so a
// free can tell whether another stream's use of the memory is ordered
// before it (the record_stream rule). Knows nothing of reports: the device
// guard asks it.
namespace mate {
namespace device {

struct TrackerStats {
  uint64_t launches = 0;
  uint64_t no_layout = 0;     // launches whose parameters could not be read (or that have none)
  uint64_t guarded_args = 0;  // parameter words that pointed into guarded allocations
  uint64_t ns = 0;            // time spent in the launch callbacks
  uint64_t site_ns = 0;       // ... of which taking the launches' call sites
  uint64_t args_ns = 0;       // ... of which finding and noting the guarded arguments (the allocator's lock)
  // The launch calls themselves, from CUPTI's entry callback to its exit
  // one: the driver's launch and CUPTI's own work around it (the
  // background thread's mappings were measured not to lengthen it:
  // bench/README.md). Timed only under MATE_GUARD_CUDA_STATS (bench/cuda).
  uint64_t call_ns = 0;
  // Takes of the tracker's lock (a launch's two, an ordering call's) that
  // found it held, and their wait; and the callbacks CUPTI made, by call
  // (launches, then each ordering call), those of the guard's own calls
  // apart. Counted only under MATE_GUARD_CUDA_STATS (bench/cuda).
  uint64_t lock_waits = 0, lock_wait_ns = 0;
  uint64_t launch_callbacks = 0, ordering_callbacks = 0, own_callbacks = 0;
};

// Subscribes to CUPTI. False, with `why`, when tracking can't run (no
// CUPTI, another CUPTI client such as a profiler): the guard runs without.
// Reads its settings from the one options struct, which must outlive it:
// launchBlocking (synchronize after every launch), dumpInputs (a kernel
// glob: save inputs before matching launches, input_dump.h). `hooks`: what
// it asks the facade (tracker_hooks.h).
bool StartTracking(const cuda::Driver* drv, const Options& options, const TrackerHooks& hooks, std::string* why);
bool TrackingOn();
const char* TrackingOff();  // why tracking is off ("" when on, or turned off on purpose)
void TrackingNotWanted();   // trackLaunches: false
bool LaunchBlocking();
void StopTracking();

// The call site of a launch (JS or Python stack, an interned StackStore
// id, 0 for none), asked on the launching thread.
using SiteProvider = uint32_t (*)();
void SetSiteProvider(SiteProvider provider);

// True when the program ordered `use` before work it queues on `stream`
// now (an event waited on, a synchronize, the legacy stream's implicit
// ordering, or the same stream).
bool Ordered(cuda::CUstream stream, const StreamUse& use);
cuda::CUstream StreamHandle(uint16_t index);

// The launches for an illegal-address report: those not known to have
// completed, newest first (at most `cap`; `total` counts them all), or
// with `exact` only that launch. Arguments resolved to their allocations.
void LaunchesForReport(uint64_t exact, std::vector<DeviceLaunch>* out, uint64_t* total, size_t cap);
bool FindLaunch(uint64_t number, DeviceLaunch* out);

TrackerStats GetTrackerStats();
// How launches are seen, for the tuning stats: "cupti", or "imports (...)"
// with the import front-end's counts (driver_interpose.h), or "cupti (...)"
// with why the import front-end, asked for, did not start.
std::string TrackingVia();

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_LAUNCH_TRACKER_H_
