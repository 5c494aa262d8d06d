#include "platform/stack_trace.h"

#include <execinfo.h>

namespace mate {
namespace platform {

namespace {
constexpr int kMaxCapture = 64;
}

void WarmUpStackTrace() {
  void* pcs[4];
  backtrace(pcs, 4);
}

size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi) {
  // A few extra frames for our own, which are dropped.
  void* raw[kMaxCapture];
  int want = static_cast<int>(max + 6 < kMaxCapture ? max + 6 : kMaxCapture);
  int got = backtrace(raw, want);
  int i = 0;
  while (i < got) {
    auto pc = reinterpret_cast<uintptr_t>(raw[i]);
    if (pc < skip_lo || pc >= skip_hi) break;
    i++;
  }
  size_t n = 0;
  for (; i < got && n < max; i++) pcs[n++] = reinterpret_cast<uintptr_t>(raw[i]);
  return n;
}

}  // namespace platform
}  // namespace mate
