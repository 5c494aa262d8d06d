#ifndef MATE_CRASH_BACKTRACE_PROBE_H_
#define MATE_CRASH_BACKTRACE_PROBE_H_

namespace mate {

// Test-only: a SIGSEGV/SIGBUS handler placed in front of whatever handler
// is installed (mate-guard's own, Node's, or the default). On a fault it
// prints the faulting thread's native frames to stderr, one line each:
//   mate-guard-probe frames=<n> method=<unwind-tables|...>
//   mate-guard-probe #<i> pc=0x<hex> offset=0x<hex> return=<0|1> module=<path>
// then passes the fault on unchanged. Proves the capture on real faults
// (main thread, libuv pool, worker_threads, finalizers) until the real
// handler writes the frames into its report event.
bool InstallBacktraceProbe();

}  // namespace mate

#endif  // MATE_CRASH_BACKTRACE_PROBE_H_
