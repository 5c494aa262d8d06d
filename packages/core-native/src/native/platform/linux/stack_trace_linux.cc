#include "platform/stack_trace.h"

#include <unwind.h>

namespace mate {
namespace platform {

namespace {

struct Walk {
  uintptr_t* pcs;
  size_t max, n;
  uintptr_t skip_lo, skip_hi, stop_lo, stop_hi;
  bool skipping;
};

_Unwind_Reason_Code Step(struct _Unwind_Context* context, void* arg) {
  auto* w = static_cast<Walk*>(arg);
  auto pc = static_cast<uintptr_t>(_Unwind_GetIP(context));
  if (pc == 0) return _URC_END_OF_STACK;
  if (w->skipping && pc >= w->skip_lo && pc < w->skip_hi) return _URC_NO_REASON;
  w->skipping = false;
  w->pcs[w->n++] = pc;
  // Past the first frame in the stop range the frames are the runtime's own
  // (Node-API and V8 internals): unwinding them costs most of the time.
  if (w->n >= w->max || (pc >= w->stop_lo && pc < w->stop_hi)) return _URC_END_OF_STACK;
  return _URC_NO_REASON;
}

}  // namespace

void WarmUpStackTrace() {
  uintptr_t pcs[4];
  CaptureStack(pcs, 4, 0, 0, 0, 0);
}

size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi, uintptr_t stop_lo,
                    uintptr_t stop_hi) {
  if (max == 0) return 0;
  Walk w{pcs, max, 0, skip_lo, skip_hi, stop_lo, stop_hi, true};
  _Unwind_Backtrace(Step, &w);
  return w.n;
}

}  // namespace platform
}  // namespace mate
