#include "device/allocator/guarded_span.h"

namespace mate {
namespace device {
namespace guarded_span {
uintptr_t g_lo = ~uintptr_t{0};
uintptr_t g_hi = 0;
}  // namespace guarded_span

void WidenGuardedSpan(uintptr_t lo, uintptr_t hi) {
  using guarded_span::g_hi;
  using guarded_span::g_lo;
  uintptr_t cur = __atomic_load_n(&g_lo, __ATOMIC_ACQUIRE);
  while (lo < cur && !__atomic_compare_exchange_n(&g_lo, &cur, lo, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
  cur = __atomic_load_n(&g_hi, __ATOMIC_ACQUIRE);
  while (hi > cur && !__atomic_compare_exchange_n(&g_hi, &cur, hi, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}

}  // namespace device
}  // namespace mate
