#ifndef MATE_CRASH_SIGNAL_HANDLER_H_
#define MATE_CRASH_SIGNAL_HANDLER_H_

namespace mate {

// Installs the SIGSEGV/SIGBUS handler that turns a fault in guarded memory
// into a report (the event file, then the printer) and lets the process die
// by the signal; faults that are not ours go to the handler that was there
// before. Also gives the calling thread an alternate signal stack.
// (platform/linux/signal_handler_linux.cc)
bool InstallFaultHandler();

// An alternate signal stack for the calling thread, if it has none: a fault
// must not be handled on the stack of a thread that may have overrun it.
void EnsureAltStack();

}  // namespace mate

#endif  // MATE_CRASH_SIGNAL_HANDLER_H_
