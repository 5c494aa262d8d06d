#ifndef MATE_PLATFORM_STACK_TRACE_H_
#define MATE_PLATFORM_STACK_TRACE_H_

#include <cstddef>
#include <cstdint>

// Raw native call stacks: return addresses only, symbolized much later (and
// only when a report shows them).
namespace mate {
namespace platform {

// Primes the unwinder once (its first use looks things up and may allocate).
void WarmUpStackTrace();

// Up to `max` return addresses of the calling thread, innermost first,
// leaving out the leading frames that lie in [skip_lo, skip_hi) (the
// capturing library's own frames) and stopping after the first frame in
// [stop_lo, stop_hi) (e.g. the executable: the runtime's frames above the
// caller). Unwinds with the unwind tables, so code built without frame
// pointers unwinds too: on x86-64 each return address's rule (CFA = rsp or
// rbp + n, the caller's rbp saved at CFA - m) is read once from .eh_frame
// into a per-thread table, and a walk is then a lookup and two loads per
// frame; a stack with a frame no such rule describes (signal frames, CFA
// expressions) goes to libgcc's _Unwind_Backtrace, as every stack does on
// other architectures. Code without unwind tables (JIT) ends the stack, as
// it does for libgcc.
size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi, uintptr_t stop_lo,
                    uintptr_t stop_hi);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_STACK_TRACE_H_
