#ifndef MATE_DEVICE_COUNTED_LOCK_H_
#define MATE_DEVICE_COUNTED_LOCK_H_

#include <cstdint>
#include <mutex>

#include "device/driver/now.h"

namespace mate {
namespace device {

// Takes of a lock that found it held, and the time they waited: a tuning
// counter (bench/cuda), kept only under MATE_GUARD_CUDA_STATS, where it
// tells lock hand-overs between a launching thread, another launching
// thread and the background thread from the work done under the lock.
struct LockWaits {
  uint64_t waits = 0, ns = 0;  // added with atomics
};

inline std::unique_lock<std::mutex> CountedLock(std::mutex& mu, LockWaits* w) {
  if (!TimeCounters()) return std::unique_lock<std::mutex>(mu);
  std::unique_lock<std::mutex> lock(mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    uint64_t t0 = NowNs();
    lock.lock();
    __atomic_fetch_add(&w->waits, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&w->ns, NowNs() - t0, __ATOMIC_RELAXED);
  }
  return lock;
}

inline LockWaits ReadLockWaits(const LockWaits& w) {
  LockWaits out;
  out.waits = __atomic_load_n(&w.waits, __ATOMIC_RELAXED);
  out.ns = __atomic_load_n(&w.ns, __ATOMIC_RELAXED);
  return out;
}

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_COUNTED_LOCK_H_
