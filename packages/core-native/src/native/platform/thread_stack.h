#ifndef MATE_PLATFORM_THREAD_STACK_H_
#define MATE_PLATFORM_THREAD_STACK_H_

#include <cstdint>

namespace mate {
namespace platform {

// The calling thread's stack, [*lo, *hi); false where it can't be told.
// Not cheap (the main thread's is read from /proc): callers keep it.
bool CurrentThreadStack(uintptr_t* lo, uintptr_t* hi);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_THREAD_STACK_H_
