#include "platform/signals.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace mate {
namespace platform {

namespace {
constexpr size_t kAltStackBytes = 256 * 1024;
}  // namespace

bool InstallSignalHandler(int sig, SignalHandler handler, const int* blocked, size_t blocked_count,
                          PreviousAction* previous) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = handler;
  // No SA_NODEFER: a fault inside the handler itself must kill, not recurse.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < blocked_count; i++) sigaddset(&sa.sa_mask, blocked[i]);
  struct sigaction old;
  if (sigaction(sig, &sa, &old) != 0) return false;
  previous->action = old;
  previous->saved = true;
  return true;
}

bool HandlerIs(int sig, SignalHandler handler) {
  struct sigaction cur;
  if (sigaction(sig, nullptr, &cur) != 0) return false;
  return (cur.sa_flags & SA_SIGINFO) != 0 && cur.sa_sigaction == handler;
}

PreviousKind KindOf(const PreviousAction& previous) {
  const struct sigaction& p = previous.action;
  if (!previous.saved) return PreviousKind::kDefault;
  if (p.sa_flags & SA_SIGINFO) return p.sa_sigaction != nullptr ? PreviousKind::kHandler : PreviousKind::kDefault;
  if (p.sa_handler == SIG_DFL) return PreviousKind::kDefault;
  if (p.sa_handler == SIG_IGN) return PreviousKind::kIgnore;
  return PreviousKind::kHandler;
}

void CallPrevious(const PreviousAction& previous, int sig, siginfo_t* info, void* ucontext) {
  const struct sigaction& p = previous.action;
  if (KindOf(previous) != PreviousKind::kHandler) return;
  // Its own mask, as the kernel would have set it for it.
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &p.sa_mask, &old);
  if (p.sa_flags & SA_SIGINFO) p.sa_sigaction(sig, info, ucontext);
  else p.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void RestoreDefault(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

bool SignalPending(int sig) {
  sigset_t pending;
  return sigpending(&pending) == 0 && sigismember(&pending, sig) == 1;
}

bool DispositionIsDefault(int sig) {
  struct sigaction now;
  if (sigaction(sig, nullptr, &now) != 0) return false;
  return !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL;
}

bool IsSynchronous(const siginfo_t* info) {
  // si_code > 0: the kernel's own reason (SEGV_MAPERR, ILL_ILLOPN, ...);
  // SI_KERNEL (0x80) too. <= 0: a process sent it.
  return info != nullptr && info->si_code > 0;
}

int SenderPid(const siginfo_t* info) {
  if (info == nullptr || info->si_code > 0) return 0;
  return info->si_pid;
}

void EnsureAltStack() {
  stack_t current;
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  void* mem = mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  stack_t ss;
  memset(&ss, 0, sizeof(ss));
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  if (sigaltstack(&ss, nullptr) != 0) munmap(mem, kAltStackBytes);
}

}  // namespace platform
}  // namespace mate
