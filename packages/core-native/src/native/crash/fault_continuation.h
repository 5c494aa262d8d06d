#ifndef MATE_CRASH_FAULT_CONTINUATION_H_
#define MATE_CRASH_FAULT_CONTINUATION_H_

// What a host asks to happen after the report of a fault on guarded
// memory instead of the process dying: another program in its place (the
// pytest plugin: pytest again, for the tests after the faulting one). The
// process cannot go on itself (the fault is in code that cannot be
// resumed), but it can be replaced: same pid, so whoever waits for it
// (a shell, CI) gets the continuation's exit status. Everything it needs is
// copied when it is set; the handler only calls execve.

#include <string>
#include <vector>

namespace mate {

// `argv[0]` is executed with `argv` and `envp`; `std_fds` are descriptors
// to put back on 0, 1 and 2 first (-1: leave that one). An empty `argv`
// turns it off. Not while a fault may be handled: set it before the code
// it speaks of runs (as SetFaultNote).
void SetFaultContinuation(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                          const int std_fds[3]);

// Called by the crash handler after a guard fault's report: replaces the
// process when a continuation is set (in this process, not in a forked
// child, which inherits it), else returns (so does a failed exec,
// after saying so where reports go). Async-signal-safe.
void ContinueAfterFault();

}  // namespace mate

#endif  // MATE_CRASH_FAULT_CONTINUATION_H_
