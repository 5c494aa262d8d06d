#ifndef MATE_PLATFORM_SIGNALS_H_
#define MATE_PLATFORM_SIGNALS_H_

// OS primitives of the crash handler: installing a handler on an alternate
// stack, calling the handler that was there before, and telling whether the
// process is about to die by a signal. No policy: crash/ decides what a
// signal means. Everything but InstallSignalHandler and EnsureAltStack is
// async-signal-safe.

#include <signal.h>

#include <cstddef>

namespace mate {
namespace platform {

using SignalHandler = void (*)(int sig, siginfo_t* info, void* ucontext);

// What was installed for a signal before us.
struct PreviousAction {
  struct sigaction action;
  bool saved = false;
};

// Installs `handler` for `sig` (SA_SIGINFO, on the alternate stack; while
// it runs, `sig` and the `blocked` signals are blocked) and keeps what was
// there in `previous`.
bool InstallSignalHandler(int sig, SignalHandler handler, const int* blocked, size_t blocked_count,
                          PreviousAction* previous);

// Whether `handler` is the one installed for `sig` now.
bool HandlerIs(int sig, SignalHandler handler);

// How the previous disposition takes a signal.
enum class PreviousKind { kDefault, kIgnore, kHandler };
PreviousKind KindOf(const PreviousAction& previous);

// Calls the previous handler (kHandler only) with the signal's arguments.
void CallPrevious(const PreviousAction& previous, int sig, siginfo_t* info, void* ucontext);

// The default action from now on (for this signal, every thread).
void RestoreDefault(int sig);

// Whether `sig` is pending for this thread or the process: raised while the
// handler runs with it blocked, it is delivered when the handler returns.
bool SignalPending(int sig);

// Whether the disposition of `sig` is now the default action (someone
// replaced ours: Node's trap handler does so before it re-raises a fault).
bool DispositionIsDefault(int sig);

// The kernel raised it for an instruction of this thread (a fault, a trap),
// as opposed to kill(), tgkill(), raise() or abort().
bool IsSynchronous(const siginfo_t* info);

// Sent by a process (kill, tgkill, raise, abort): the sender's pid, else 0.
int SenderPid(const siginfo_t* info);

// An alternate signal stack for the calling thread, if it has none: a fault
// must not be handled on the stack of a thread that may have overrun it.
void EnsureAltStack();

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_SIGNALS_H_
