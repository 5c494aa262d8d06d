#ifndef MATE_DEVICE_ALLOCATOR_LAUNCH_USE_H_
#define MATE_DEVICE_ALLOCATOR_LAUNCH_USE_H_

#include <cstdint>

// What the allocator keeps of a kernel launch's use of its memory: the
// launch tracker (above it) finds the uses and hands them down, so the
// words are declared here, at the lower layer.
namespace mate {
namespace device {

// Where a stream stands: its index in the tracker and how many launches it
// had when the use happened.
struct StreamUse {
  uint16_t stream = 0;
  uint64_t seq = 0;
  uint64_t launch = 0;  // the launch's number
};

// A parameter word that points into the guard's address space, as found.
struct ArgRef {
  uintptr_t value = 0;
  uint64_t alloc_id = 0;
  uintptr_t user = 0;
  uint64_t size = 0;
  uint32_t slot = 0;
  uint16_t param = 0;
  uint16_t offset = 0;
  uint32_t param_size = 0;  // bytes of the parameter: > 8, a struct passed by value
  uint8_t device = 0;
  uint8_t mode = 0;   // Mode
  uint8_t freed = 0;  // the allocation was freed already
};

// Parameter words of one launch noted together (NoteLaunchArgs): a batch.
constexpr uint32_t kMaxLaunchWords = 32;

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_ALLOCATOR_LAUNCH_USE_H_
