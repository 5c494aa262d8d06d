#ifndef MATE_CRASH_TERMINATE_HOOK_H_
#define MATE_CRASH_TERMINATE_HOOK_H_

// Uncaught C++ exceptions: std::terminate runs (an exception that no frame
// catches: thrown through Node's or V8's frames, from a noexcept function,
// on a std::thread), then abort(). The hook records the exception's type
// and what() and calls the handler that was there before (libstdc++'s
// prints "terminate called after throwing ..." and aborts); the SIGABRT
// that follows is reported as an uncaught-exception with them.

namespace mate {

struct UncaughtException {
  const char* type;  // demangled where possible
  const char* what;  // nullptr when it is no std::exception
};

// Installs the hook once (process-wide: libstdc++ is shared with Node).
void InstallTerminateHook();

// The exception std::terminate was called for on the calling thread, if
// any; nullptr otherwise. Async-signal-safe.
const UncaughtException* UncaughtOnThisThread();

}  // namespace mate

#endif  // MATE_CRASH_TERMINATE_HOOK_H_
