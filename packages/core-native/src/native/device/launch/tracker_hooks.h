#ifndef MATE_DEVICE_LAUNCH_TRACKER_HOOKS_H_
#define MATE_DEVICE_LAUNCH_TRACKER_HOOKS_H_

#include <cstdint>

#include "device/allocator/launch_use.h"
#include "device/driver/cuda_driver.h"
#include "report/device_detail.h"

namespace mate {
namespace device {

// What launch tracking needs from the facade above it (the guarded
// allocations of every device, the one sticky-error report), handed in at
// StartTracking as plain function pointers: the tracker includes none of
// the facade's headers. (The first test of a parameter word needs no hook:
// the guarded span is the allocator layer's, allocator/guarded_span.h.) A hook left null is a tracker with no guard:
// nothing guarded, nothing to report.
struct TrackerHooks {
  // Up to kMaxLaunchWords words of one launch noted as uses: found[i] says out[i] is filled.
  void (*note_launch_args)(const uint64_t* values, uint32_t n, const StreamUse& use, ArgRef* out,
                           bool* found) = nullptr;
  // The allocation a parameter word points into, use not noted (input dumps).
  bool (*find_launch_arg)(uint64_t value, ArgRef* out) = nullptr;
  // An argument resolved for a report.
  void (*resolve_arg)(const ArgRef& ref, DeviceLaunchArg* out) = nullptr;
  // A kernel's fault seen by a tracked call, or by the synchronize after `exact_launch`.
  void (*on_sticky_error)(cuda::CUresult err, const char* where, uint64_t exact_launch) = nullptr;

  void NoteLaunchArgs(const uint64_t* values, uint32_t n, const StreamUse& use, ArgRef* out, bool* found) const {
    if (note_launch_args != nullptr) {
      note_launch_args(values, n, use, out, found);
      return;
    }
    for (uint32_t i = 0; i < n && i < kMaxLaunchWords; i++) found[i] = false;
  }
  bool FindLaunchArg(uint64_t value, ArgRef* out) const {
    return find_launch_arg != nullptr && find_launch_arg(value, out);
  }
  void ResolveArg(const ArgRef& ref, DeviceLaunchArg* out) const {
    if (resolve_arg != nullptr) resolve_arg(ref, out);
  }
  void OnStickyError(cuda::CUresult err, const char* where, uint64_t exact_launch) const {
    if (on_sticky_error != nullptr) on_sticky_error(err, where, exact_launch);
  }
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_LAUNCH_TRACKER_HOOKS_H_
