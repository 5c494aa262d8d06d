#ifndef MATE_CRASH_BACKTRACE_H_
#define MATE_CRASH_BACKTRACE_H_

// Native stacks for reports: the faulting thread's frames, captured inside
// the fault handler, each resolved to module + offset through the module
// map. Symbolizing (function, file:line) happens later, outside the process
// or at least outside the handler.

#include <cstddef>
#include <cstdint>

namespace mate {

// Enough to reach from an addon's bug to the JS call that ran it.
constexpr size_t kMaxNativeFrames = 64;

struct NativeFrame {
  uintptr_t pc = 0;
  uintptr_t offset = 0;          // pc - load bias of `module` (link-time address); pc when unknown
  const char* module = nullptr;  // absolute path (never freed), nullptr when unknown
  uint32_t module_index = 0xffffffffu;  // module map index (kNoModule when unknown)
  // `pc` is a return address (every frame but the interrupted one): the
  // call is the instruction before it, so symbolize offset - 1.
  bool return_address = false;
};

enum class UnwindMethod : uint8_t {
  kNone,           // nothing captured
  kPcOnly,         // the faulting pc alone
  kUnwindTables,   // DWARF CFI (.eh_frame), through the signal frame
  kFramePointers,  // frame-pointer chain: the fallback when the tables gave only the pc
};
const char* UnwindMethodName(UnwindMethod m);  // "unwind-tables", ...

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
