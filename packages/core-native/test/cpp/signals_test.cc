// platform/signals: the primitives the crash handler decides a death with
// (on SIGUSR2, which nothing here dies of).
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "platform/signals.h"
#include "signal_fixtures.h"

namespace {

int g_previous_calls = 0;
void Previous(int, siginfo_t*, void*) { g_previous_calls++; }
void Ours(int, siginfo_t*, void*) {}
// A previous handler that leaves the process to die as Node's does: the
// default action back, and the signal raised again (pending while blocked).
void ReRaises(int sig, siginfo_t*, void*) {
  mate::platform::RestoreDefault(sig);
  raise(sig);
}

}  // namespace

TEST(the_previous_handler_is_kept_and_called_with_the_signal) {
  using namespace mate::platform;
  mate_test::SavedAction saved(SIGUSR2);
  mate_test::InstallSigInfo(SIGUSR2, Previous);
  PreviousAction kept;
  int blocked[] = {SIGUSR1};
  CHECK(InstallSignalHandler(SIGUSR2, Ours, blocked, 1, &kept));
  CHECK(KindOf(kept) == PreviousKind::kHandler);
  g_previous_calls = 0;
  CallPrevious(kept, SIGUSR2, nullptr, nullptr);
  CHECK_EQ(g_previous_calls, 1);
  CHECK(!DispositionIsDefault(SIGUSR2));
}

TEST(a_default_or_ignored_previous_disposition_is_told_apart) {
  using namespace mate::platform;
  mate_test::SavedAction saved(SIGUSR2);
  signal(SIGUSR2, SIG_DFL);
  PreviousAction kept;
  CHECK(InstallSignalHandler(SIGUSR2, Ours, nullptr, 0, &kept));
  CHECK(KindOf(kept) == PreviousKind::kDefault);
  signal(SIGUSR2, SIG_IGN);
  CHECK(InstallSignalHandler(SIGUSR2, Ours, nullptr, 0, &kept));
  CHECK(KindOf(kept) == PreviousKind::kIgnore);
  RestoreDefault(SIGUSR2);
  CHECK(DispositionIsDefault(SIGUSR2));
}

TEST(a_previous_handler_that_re_raises_leaves_the_signal_pending_with_the_default_action) {
  using namespace mate::platform;
  mate_test::SavedAction saved(SIGUSR2);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &block, &old);  // as inside the handler
  mate_test::InstallSigInfo(SIGUSR2, ReRaises);
  PreviousAction kept;
  CHECK(InstallSignalHandler(SIGUSR2, Ours, nullptr, 0, &kept));
  CHECK(!SignalPending(SIGUSR2));
  CallPrevious(kept, SIGUSR2, nullptr, nullptr);
  CHECK(SignalPending(SIGUSR2));
  CHECK(DispositionIsDefault(SIGUSR2));
  // Discard it: ignored, then unblocked.
  signal(SIGUSR2, SIG_IGN);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  CHECK(!SignalPending(SIGUSR2));
}

TEST(the_kernel_raised_it_or_a_process_sent_it) {
  using namespace mate::platform;
  siginfo_t fault;
  memset(&fault, 0, sizeof(fault));
  fault.si_code = SEGV_MAPERR;
  CHECK(IsSynchronous(&fault));
  CHECK_EQ(SenderPid(&fault), 0);
  siginfo_t sent;
  memset(&sent, 0, sizeof(sent));
  sent.si_code = SI_TKILL;
  sent.si_pid = getpid();
  CHECK(!IsSynchronous(&sent));
  CHECK_EQ(SenderPid(&sent), getpid());
  CHECK(!IsSynchronous(nullptr));
}
