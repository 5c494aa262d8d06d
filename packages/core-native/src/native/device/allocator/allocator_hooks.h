#ifndef MATE_DEVICE_ALLOCATOR_ALLOCATOR_HOOKS_H_
#define MATE_DEVICE_ALLOCATOR_ALLOCATOR_HOOKS_H_

#include <cstdint>

#include "device/allocator/launch_use.h"
#include "device/driver/cuda_driver.h"

namespace mate {
namespace device {

// What the allocator needs from the layers above it (launch tracking, the
// facade), handed in at creation as plain function pointers: it includes
// none of their headers, so it builds and is tested alone (over the
// simulated driver, with no hooks). A hook left null is a guard without
// that layer: no launch blocking, every use ordered (no tracker saw one),
// nobody to read an error.
struct AllocatorHooks {
  // Launch blocking is on: the synchronize after a faulting launch names it.
  bool (*launch_blocking)() = nullptr;
  // The program ordered `use` before work it queues on `stream` now.
  bool (*ordered)(cuda::CUstream stream, const StreamUse& use) = nullptr;
  // The stream behind a tracker's stream index.
  cuda::CUstream (*stream_handle)(uint16_t index) = nullptr;
  // Why the calling thread's last call failed (the C ABI's error text).
  void (*set_last_error)(const char* text) = nullptr;

  bool LaunchBlocking() const { return launch_blocking != nullptr && launch_blocking(); }
  bool Ordered(cuda::CUstream stream, const StreamUse& use) const { return ordered == nullptr || ordered(stream, use); }
  cuda::CUstream StreamHandle(uint16_t index) const {
    return stream_handle != nullptr ? stream_handle(index) : nullptr;
  }
  void SetLastError(const char* text) const {
    if (set_last_error != nullptr) set_last_error(text);
  }
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_ALLOCATOR_ALLOCATOR_HOOKS_H_
