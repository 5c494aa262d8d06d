#include "crash/backtrace_probe.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "crash/backtrace.h"
#include "crash/report_writer.h"
#include "platform/linux/module_map.h"

namespace mate {

namespace {

struct sigaction g_prev_segv;
struct sigaction g_prev_bus;
bool g_probe_installed = false;
NativeFrame g_frames[kMaxNativeFrames];  // reserved up front, not on a signal stack
char g_line[4096];

void Flush(Writer* w) {
  size_t done = 0;
  while (done < w->size()) {
    ssize_t n = write(2, w->data() + done, w->size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

void Probe(int sig, siginfo_t* info, void* uctx) {
  UnwindMethod method;
  size_t n = CaptureFaultBacktrace(uctx, g_frames, kMaxNativeFrames, &method);
  Writer head(g_line, sizeof(g_line));
  head.Str("mate-guard-probe frames=");
  head.Dec(n);
  head.Str(" method=");
  head.Str(UnwindMethodName(method));
  head.Char('\n');
  Flush(&head);
  for (size_t i = 0; i < n; i++) {
    Writer w(g_line, sizeof(g_line));
    w.Str("mate-guard-probe #");
    w.Dec(i);
    w.Str(" pc=");
    w.Hex(g_frames[i].pc);
    w.Str(" offset=");
    w.Hex(g_frames[i].offset);
    w.Str(" return=");
    w.Char(g_frames[i].return_address ? '1' : '0');
    w.Str(" module=");
    w.Str(g_frames[i].module ? g_frames[i].module : "");
    w.Char('\n');
    Flush(&w);
  }
  // Hand the fault on as if the probe were not there.
  const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, uctx);
  } else if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);  // the instruction faults again and the process dies by it
  }
}

}  // namespace

bool InstallBacktraceProbe() {
  if (g_probe_installed) return true;
  RefreshModuleMap(true);
  WarmUpBacktrace();
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = Probe;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_prev_segv) != 0 || sigaction(SIGBUS, &sa, &g_prev_bus) != 0) return false;
  g_probe_installed = true;
  return true;
}

}  // namespace mate
