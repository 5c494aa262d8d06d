#ifndef MATE_PLATFORM_STACK_TRACE_H_
#define MATE_PLATFORM_STACK_TRACE_H_

#include <cstddef>
#include <cstdint>

// Raw native call stacks: return addresses only, symbolized much later (and
// only when a report shows them).
namespace mate {
namespace platform {

// Loads and primes the unwinder once, so later captures never load a
// library (the first glibc backtrace() dlopens libgcc_s).
void WarmUpStackTrace();

// Up to `max` return addresses of the calling thread, innermost first,
// leaving out the leading frames that lie in [skip_lo, skip_hi) (the
// capturing library's own frames). Unwinds with the unwind tables, so code
// built without frame pointers unwinds too.
size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_STACK_TRACE_H_
