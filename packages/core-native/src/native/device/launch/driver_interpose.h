#ifndef MATE_DEVICE_LAUNCH_DRIVER_INTERPOSE_H_
#define MATE_DEVICE_LAUNCH_DRIVER_INTERPOSE_H_

#include <cstdint>
#include <string>

#include "device/driver/cuda_driver.h"

// Launch tracking's second front-end, for where CUPTI cannot run (not
// installed, or a profiler holds it): the program's driver calls seen by
// handing it wrappers instead of CUPTI's callbacks (they cost the same:
// bench/README.md, issue 52).
// The CUDA runtime (PyTorch's, and the copies linked into cuBLAS and
// NCCL), Triton's launcher and most addons find the driver's functions
// through dlsym and cuGetProcAddress: every module's dlsym and dlvsym
// imports are redirected to gates (platform/dlsym_gate.h), and a look-up
// of a tracked function (launches, event records, stream waits,
// synchronizes, queries) or of cuGetProcAddress itself returns a wrapper
// that calls the real function and reports the call to the tracker as
// CUPTI would (tracker::DriverEvent); a module linked with -lcuda has its
// imports of those functions redirected to the same wrappers. What it
// cannot see: a runtime that had looked the driver up before tracking
// started (so it starts only where no CUDA context exists yet), and a
// tracked function the driver answers with a pointer it does not know (a
// gap: counted, and an ordering call's gap turns cross-stream-free
// reports off, OrderingUnseen).
namespace mate {
namespace device {

struct InterposeStats {
  uint64_t modules = 0;   // modules whose dlsym/dlvsym imports go through the gates
  uint64_t handed = 0;    // wrappers handed out (dlsym and cuGetProcAddress answers)
  uint64_t gaps = 0;      // tracked functions handed out unwrapped
  std::string gap_names;  // the first of them
};

// Redirects what is loaded now and watches later loads. False, with
// `why`, where it cannot run (no gates for this machine, a CUDA context
// made before): the tracker uses CUPTI then.
bool StartInterposing(const cuda::Driver* drv, std::string* why);
// Wrappers report calls only while on (StopTracking turns them into plain calls).
void SetInterposing(bool on);
// An ordering call went out unwrapped (a version of it this file does not
// know): the tracker then never calls a use unordered (no cross-stream-free
// report it could not stand behind).
bool OrderingUnseen();
InterposeStats GetInterposeStats();

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_LAUNCH_DRIVER_INTERPOSE_H_
