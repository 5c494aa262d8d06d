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
// caller). Unwinds with the unwind tables (_Unwind_Backtrace), so code built
// without frame pointers unwinds too.
size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi, uintptr_t stop_lo,
                    uintptr_t stop_hi);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_STACK_TRACE_H_
