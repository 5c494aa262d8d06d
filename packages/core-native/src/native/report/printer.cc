#include "report/printer.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "core/stack_store.h"
#include "report/event_origin.h"
#include "report/writer.h"

namespace mate {

namespace {

char g_path_env[8192];
const char g_marker_env[] = "MATE_GUARD_PRINTER=1";
char g_with_earlier[] = "--with-earlier";
bool g_earlier = false;
char g_native[4096];  // mate-guard-print beside this library ("" when absent)
int g_fd = 2;         // where reports go (SetReportFd)

bool Copy(char* dst, size_t cap, const char* prefix, const char* src) {
  size_t p = strlen(prefix), n = strlen(src);
  if (p + n + 1 > cap) return false;
  memcpy(dst, prefix, p);
  memcpy(dst + p, src, n + 1);
  return true;
}

void WriteAll(const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = write(g_fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

bool ConfigurePrinter(const char* path_env, bool with_earlier) {
  g_earlier = with_earlier;
  return Copy(g_path_env, sizeof(g_path_env), "PATH=", path_env);
}

void ConfigureNativePrinter() {
  g_native[0] = '\0';
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&ConfigureNativePrinter), &info) == 0 || info.dli_fname == nullptr) return;
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == nullptr) return;
  size_t dir = static_cast<size_t>(slash - info.dli_fname) + 1;
  const char name[] = "mate-guard-print";
  if (dir + sizeof(name) > sizeof(g_native)) return;
  memcpy(g_native, info.dli_fname, dir);
  memcpy(g_native + dir, name, sizeof(name));
  if (access(g_native, X_OK) != 0) g_native[0] = '\0';
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    SetEventRuntime(exe);
  }
  // Its symbolizers are found on PATH: this process's, where the host set none.
  const char* path = getenv("PATH");
  if (g_path_env[0] == '\0' && path != nullptr) Copy(g_path_env, sizeof(g_path_env), "PATH=", path);
}

void SetReportFd(int fd) { g_fd = fd >= 0 ? fd : 2; }

namespace {

// Starts `argv` with our own small environment (PATH for the symbolizers;
// what the formatter needs from this process is in the event) and waits
// at most `timeout_ms`; true when it exited 0.
bool Spawn(char* const argv[], int timeout_ms) {
  char* envp[3];
  int k = 0;
  if (g_path_env[0]) envp[k++] = g_path_env;
  envp[k++] = const_cast<char*>(g_marker_env);
  envp[k] = nullptr;
  pid_t pid = vfork();
  if (pid < 0) return false;
  if (pid == 0) {
    // The handler runs with SIGSEGV blocked and execve keeps the mask.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Node marks its standard streams close-on-exec: the printer's stderr
    // must be this process's (the child has its own descriptor table).
    if (g_fd != 2) dup2(g_fd, 2);
    int flags = fcntl(2, F_GETFD);
    if (flags >= 0) fcntl(2, F_SETFD, flags & ~FD_CLOEXEC);
    execve(argv[0], argv, envp);
    _exit(127);
  }
  int status = 0;
  for (int waited = 0; waited <= timeout_ms; waited += 5) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r < 0) return false;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return false;
}

}  // namespace

bool RunPrinter(const char* event_file, int timeout_ms) {
  if (g_native[0] == '\0') return false;
  char* argv[] = {g_native, const_cast<char*>(event_file), g_earlier ? g_with_earlier : nullptr, nullptr};
  return Spawn(argv, timeout_ms);
}

void PrintFallback(const Violation& v, const char* event_file) {
  char buf[8192];
  Writer w(buf, sizeof(buf));
  w.Str("==mate-guard== ERROR: ");
  w.Str(ReportKindName(v.kind));
  if (v.access != AccessType::kNone) {
    w.Str(" on ");
    w.Str(AccessTypeName(v.access));
    w.Str(" at ");
    w.Hex(v.address);
  }
  if (v.has_record) {
    w.Str(": allocation #");
    w.Dec(v.record.alloc_id);
    w.Str(" (");
    w.Dec(v.record.size);
    w.Str(v.record.size == 1 ? " byte, " : " bytes, ");
    w.Str(ModeName(v.record.mode));
    w.Str(" mode)");
  }
  w.Str("; the report printer could not run, the full report is in ");
  w.Str(event_file && event_file[0] ? event_file : "no file (the report directory is not writable)");
  w.Char('\n');
  const char* test = StackStore::Get().Lookup(v.test_id);
  if (test) {
    w.Str("==mate-guard== test: ");
    w.Str(test);
    w.Char('\n');
  }
  WriteAll(w.data(), w.size());
}

void PrintToReportFd(const char* text, size_t n) { WriteAll(text, n); }

}  // namespace mate
