#ifndef MATE_CRASH_BACKTRACE_H_
#define MATE_CRASH_BACKTRACE_H_

// Native stacks for reports: the faulting thread's frames, captured inside
// the fault handler, each resolved to module + offset through the module
// map. Symbolizing (function, file:line) happens later, outside the process
// or at least outside the handler.

#include <cstddef>
#include <cstdint>

#include "report/native_frame.h"

namespace mate {

// Loads and initializes everything the capture touches (libgcc's unwinder,
// lazy symbol bindings, _dl_find_object) so a handler never does. Call at
// install, outside any signal handler, with the module map refreshed.
void WarmUpBacktrace();

// The faulting thread's stack, from inside a SIGSEGV/SIGBUS handler given
// its ucontext: frame 0 is the faulting pc from the context, then its
// callers (the handler's own frames and the signal trampoline are not
// included). At most `max` frames into `out` (caller-owned memory, e.g.
// static storage reserved at install). Async-signal-safe once warmed up: no
// locks, no allocation, no stdio; uses only the stack and `out`. `cfas`
// (optional, `max` entries): each frame's canonical frame address (the
// stack pointer before the call into it; 0 where not known), which bounds
// the stack a frame and its callees used.
size_t CaptureFaultBacktrace(const void* ucontext, NativeFrame* out, size_t max, UnwindMethod* method,
                             uintptr_t* cfas = nullptr);

// The calling thread's stack, starting at the caller of this function
// (after skipping `skip` more frames). For captures outside fault handlers
// (e.g. an allocation stack); async-signal-safe as above.
size_t CaptureBacktraceHere(NativeFrame* out, size_t max, size_t skip = 0);

}  // namespace mate

#endif  // MATE_CRASH_BACKTRACE_H_
