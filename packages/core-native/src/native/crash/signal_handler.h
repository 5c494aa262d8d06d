#ifndef MATE_CRASH_SIGNAL_HANDLER_H_
#define MATE_CRASH_SIGNAL_HANDLER_H_

// The crash handler: turns a signal into a report (GWP-ASan's layout: the
// allocator knows nothing of signals or printing; platform/signals.h holds
// the OS primitives). A fault in guarded memory is a guard violation. Any
// other deadly signal (SIGSEGV/SIGBUS outside guarded memory, SIGABRT,
// SIGFPE, SIGILL, SIGTRAP) goes first to the handler that was there before
// (Node's WebAssembly trap handler): only when that leaves the process to
// die is a deadly-signal (or uncaught-exception) report written. In every
// case the process then dies by the signal, as it would have without us.
// (crash/signal_handler.cc)

namespace mate {

// Installs the handler for the fault and death signals and the
// std::terminate hook; gives the calling thread an alternate signal stack.
bool InstallFaultHandler();

// Puts the handler back in front where another replaced it since (libuv
// does for a signal JS listens to); the replacing one becomes the handler
// called before a death is decided. Called at each test start.
void KeepFaultHandlerFirst();

// An alternate signal stack for the calling thread, if it has none.
void EnsureAltStack();

// A line the host wants printed after the report of a fault on guarded
// memory, before the process dies (the pytest plugin: the tests after this
// one do not run). Copied (at most 1 KiB); "" for none; said in this
// process only (not in a child it forks). Not while a fault
// may be handled: set it before the code it speaks of runs.
void SetFaultNote(const char* line);

}  // namespace mate

#endif  // MATE_CRASH_SIGNAL_HANDLER_H_
