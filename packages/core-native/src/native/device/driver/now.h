#ifndef MATE_DEVICE_NOW_H_
#define MATE_DEVICE_NOW_H_

#include <chrono>
#include <cstdint>

namespace mate {
namespace device {

// A monotonic clock in nanoseconds: the device guard's time counters (bench/).
inline uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_NOW_H_
