#include "platform/linux/run_tool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace mate {

namespace {

constexpr size_t kMaxOutput = 64u << 20;

long NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

}  // namespace

std::string FindOnPath(const std::string& name, const std::string& search_path) {
  size_t start = 0;
  while (start <= search_path.size()) {
    size_t colon = search_path.find(':', start);
    std::string dir = search_path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      struct stat st;
      if (access(candidate.c_str(), X_OK) == 0 && stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        return candidate;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

bool RunTool(const std::string& path, const std::vector<std::string>& args, const std::string& input, int timeout_ms,
             std::string* out) {
  if (timeout_ms <= 0) return false;
  int in[2], outp[2];
  if (pipe2(in, O_CLOEXEC) != 0) return false;
  if (pipe2(outp, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int spawned = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(outp[1]);
  if (spawned != 0) {
    close(in[1]);
    close(outp[0]);
    return false;
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  bool in_open = true;
  if (input.empty()) close(in[1]), in_open = false;
  long deadline = NowMs() + timeout_ms;
  bool ok = true;
  char buf[65536];
  for (;;) {
    long left = deadline - NowMs();
    if (left <= 0) {
      ok = false;
      break;
    }
    struct pollfd fds[2] = {{outp[0], POLLIN, 0}, {in_open ? in[1] : -1, POLLOUT, 0}};
    if (poll(fds, 2, static_cast<int>(left)) < 0) continue;
    if (in_open && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(in[1], input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 || written == input.size()) close(in[1]), in_open = false;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(outp[0], buf, sizeof(buf));
      if (n <= 0) break;
      out->append(buf, static_cast<size_t>(n));
      if (out->size() > kMaxOutput) {
        ok = false;
        break;
      }
    }
  }
  if (in_open) close(in[1]);
  close(outp[0]);
  int status = 0;
  if (!ok) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace mate
