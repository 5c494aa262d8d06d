#ifndef MATE_TEST_CPP_IN_CHILD_H_
#define MATE_TEST_CPP_IN_CHILD_H_

// A case whose code under test keeps process-wide state it learns once
// (python_frame_field, python_raw_frames) runs in a child process of its own.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

// The exit status of `body` run in a child (0: its checks held).
inline int InChild(const std::function<void(bool*)>& body) {
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    bool failed = false;
    body(&failed);
    _exit(failed ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif  // MATE_TEST_CPP_IN_CHILD_H_
