#include "crash/fault_continuation.h"

#include <unistd.h>

#include "platform/replace_process.h"
#include "report/printer.h"

namespace mate {

namespace {

// Built whole before it is published, never freed (a handler may hold the
// one it read while another is set: set once or twice a run).
struct Continuation {
  std::vector<std::string> strings;
  std::vector<char*> argv, envp;
  int std_fds[3];
  pid_t pid;  // the process it was set in: a forked child (multiprocessing) dies, it does not start pytest again
};

Continuation* g_continuation = nullptr;

std::vector<char*> Pointers(std::vector<std::string>* strings, size_t from, size_t n) {
  std::vector<char*> out;
  for (size_t i = 0; i < n; i++) out.push_back(&(*strings)[from + i][0]);
  out.push_back(nullptr);
  return out;
}

}  // namespace

void SetFaultContinuation(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                          const int std_fds[3]) {
  Continuation* c = nullptr;
  if (!argv.empty()) {
    c = new Continuation();
    c->strings = argv;
    c->strings.insert(c->strings.end(), envp.begin(), envp.end());
    c->argv = Pointers(&c->strings, 0, argv.size());
    c->envp = Pointers(&c->strings, argv.size(), envp.size());
    for (int i = 0; i < 3; i++) c->std_fds[i] = std_fds[i];
    c->pid = getpid();
  }
  __atomic_store_n(&g_continuation, c, __ATOMIC_RELEASE);
}

void ContinueAfterFault() {
  Continuation* c = __atomic_load_n(&g_continuation, __ATOMIC_ACQUIRE);
  if (c == nullptr || c->pid != getpid()) return;
  platform::ReplaceProcess(c->argv[0], c->argv.data(), c->envp.data(), c->std_fds);
  static const char kFailed[] =
      "==mate-guard== the process that was to go on could not start (execve failed): the run ends here\n";
  PrintToReportFd(kFailed, sizeof(kFailed) - 1);
}

}  // namespace mate
