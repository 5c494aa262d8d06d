#ifndef MATE_DEVICE_ALLOCATOR_GUARDED_SPAN_H_
#define MATE_DEVICE_ALLOCATOR_GUARDED_SPAN_H_

#include <cstdint>

namespace mate {
namespace device {

// The guard's address space, all devices: every range an allocator
// reserved lies in [g_lo, g_hi). The allocators widen it as they reserve;
// launch tracking reads it as the cheap first test of every parameter word
// of every launch, inline (hidden: no GOT load on that path).
namespace guarded_span {
extern __attribute__((visibility("hidden"))) uintptr_t g_lo;
extern __attribute__((visibility("hidden"))) uintptr_t g_hi;
}  // namespace guarded_span

inline bool InGuardedSpan(uint64_t value) {
  return value >= __atomic_load_n(&guarded_span::g_lo, __ATOMIC_ACQUIRE) &&
         value < __atomic_load_n(&guarded_span::g_hi, __ATOMIC_ACQUIRE);
}

// Lock-free: called under an allocator's lock.
void WidenGuardedSpan(uintptr_t lo, uintptr_t hi);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_ALLOCATOR_GUARDED_SPAN_H_
