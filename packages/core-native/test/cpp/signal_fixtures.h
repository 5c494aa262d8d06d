// Signal set-up shared by the C++ unit tests that install handlers.
#ifndef MATE_TEST_SIGNAL_FIXTURES_H_
#define MATE_TEST_SIGNAL_FIXTURES_H_

#include <signal.h>
#include <string.h>

namespace mate_test {

// The disposition of a signal a test changes, put back when the test ends
// (also when a CHECK fails midway).
class SavedAction {
 public:
  explicit SavedAction(int sig) : sig_(sig) { sigaction(sig, nullptr, &saved_); }
  ~SavedAction() { sigaction(sig_, &saved_, nullptr); }
  SavedAction(const SavedAction&) = delete;
  SavedAction& operator=(const SavedAction&) = delete;

 private:
  int sig_;
  struct sigaction saved_;
};

// Installs fn as sig's SA_SIGINFO handler, as another library would; the
// action it replaced goes to *replaced when given.
inline void InstallSigInfo(int sig, void (*fn)(int, siginfo_t*, void*), struct sigaction* replaced = nullptr) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO;
  sigaction(sig, &sa, replaced);
}

}  // namespace mate_test

#endif  // MATE_TEST_SIGNAL_FIXTURES_H_
