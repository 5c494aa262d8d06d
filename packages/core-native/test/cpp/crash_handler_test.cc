// crash/signal_handler: the handler stays in front of one installed after
// it, and a handler that chains back to it is called once, not in a loop.
#include <signal.h>
#include <unistd.h>

#include "check.h"
#include "crash/signal_handler.h"
#include "signal_fixtures.h"

namespace {

struct sigaction g_found;  // what the later handler found installed: ours
int g_calls = 0;

// A crash reporter installed after mate-guard that chains to what it found.
void ChainsBack(int sig, siginfo_t* info, void* uctx) {
  if (++g_calls > 3) _exit(3);  // a loop: fail at once, not by overflowing the stack
  if ((g_found.sa_flags & SA_SIGINFO) && g_found.sa_sigaction != nullptr) g_found.sa_sigaction(sig, info, uctx);
}

}  // namespace

TEST(a_handler_installed_later_that_chains_back_is_called_once_behind_ours) {
  CHECK(mate::InstallFaultHandler());
  mate_test::SavedAction saved(SIGFPE);
  mate_test::InstallSigInfo(SIGFPE, ChainsBack, &g_found);
  mate::KeepFaultHandlerFirst();
  struct sigaction now;
  sigaction(SIGFPE, nullptr, &now);
  CHECK(now.sa_sigaction != ChainsBack);  // ours in front again
  g_calls = 0;
  raise(SIGFPE);  // sent, not a fault: nobody dies of it here
  CHECK_EQ(g_calls, 1);
}
