#ifndef MATE_DEVICE_NOW_H_
#define MATE_DEVICE_NOW_H_

#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace mate {
namespace device {

// A monotonic clock in nanoseconds: the device guard's time counters (bench/).
inline uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The time counters (allocMs, freeMs, trackMs, launchCallMs) are printed
// only under MATE_GUARD_CUDA_STATS: elsewhere an allocation, a free and a
// launch read no clock for them (a read costs tens of ns on some VMs; a
// training step makes hundreds of these calls).
inline bool TimeCounters() {
  static const bool on = getenv("MATE_GUARD_CUDA_STATS") != nullptr;
  return on;
}

// A time counter's start: NowNs() where the counters are on, else 0; and
// the time since it (0 from a start of 0, with no clock read).
inline uint64_t CounterStartNs() { return TimeCounters() ? NowNs() : 0; }
inline uint64_t CounterElapsedNs(uint64_t start) { return start != 0 ? NowNs() - start : 0; }

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_NOW_H_
