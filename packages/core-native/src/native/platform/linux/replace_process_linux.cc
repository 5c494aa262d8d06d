#include "platform/replace_process.h"

#include <signal.h>
#include <unistd.h>

namespace mate {
namespace platform {

void ReplaceProcess(const char* path, char* const argv[], char* const envp[], const int std_fds[3]) {
  for (int fd = 0; fd < 3; fd++)
    if (std_fds[fd] >= 0 && std_fds[fd] != fd) dup2(std_fds[fd], fd);  // dup2 clears close-on-exec
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(path, argv, envp);
}

}  // namespace platform
}  // namespace mate
