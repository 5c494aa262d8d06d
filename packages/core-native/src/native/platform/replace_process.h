#ifndef MATE_PLATFORM_REPLACE_PROCESS_H_
#define MATE_PLATFORM_REPLACE_PROCESS_H_

// Replacing the running process by another program from inside a signal
// handler (the crash handler's continuation, crash/fault_continuation.h).
// Async-signal-safe.

namespace mate {
namespace platform {

// Puts `std_fds[0..2]` (where >= 0) back on descriptors 0, 1 and 2 (a test
// runner may have them pointing at its capture files), unblocks every
// signal (execve keeps the handler's mask) and executes `path`. Returns
// only when execve failed.
void ReplaceProcess(const char* path, char* const argv[], char* const envp[], const int std_fds[3]);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_REPLACE_PROCESS_H_
