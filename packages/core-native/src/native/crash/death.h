#ifndef MATE_CRASH_DEATH_H_
#define MATE_CRASH_DEATH_H_

// A guarded process dying of something that is not a guard fault: a signal
// (SIGABRT from glibc's heap checks, abort() or a failed assert; SIGSEGV or
// SIGBUS outside guarded memory; SIGFPE, SIGILL, SIGTRAP) or an uncaught C++
// exception. Turned into a violation that names the signal, the exception
// and, where the stack shows it, a free of a guarded pointer that bypassed
// the free router.

#include <signal.h>

#include <cstddef>

#include "core/guarded_allocator.h"
#include "crash/backtrace.h"
#include "report/death_detail.h"
#include "report/violation.h"

namespace mate {

// Looks up what the handler will need (glibc's abort message, the address
// ranges of the free functions). At install, outside any handler.
void PrepareDeathReports();

// The violation for a death by `sig`; `a` may be nullptr. `detail` is
// caller-owned (static) storage the violation points to. Async-signal-safe.
void DescribeDeath(const GuardedAllocator* a, int sig, const siginfo_t* info, const void* ucontext, DeathDetail* detail,
                   Violation* out);

// Once the stack is captured: a frame in free()/realloc() whose stack (that
// of the frame and its callees, from the signal's stack pointer up to the
// frame's CFA) or the context's registers hold a pointer into guarded
// memory. Sets detail->guarded_free and the violation's allocation.
// Async-signal-safe.
void FindGuardedFree(const GuardedAllocator& a, const void* ucontext, const NativeFrame* frames, const uintptr_t* cfas,
                     size_t count, DeathDetail* detail, Violation* v);

}  // namespace mate

#endif  // MATE_CRASH_DEATH_H_
