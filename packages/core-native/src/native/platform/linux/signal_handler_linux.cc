// The Linux signal side of the crash handler: install, chain, report, die by
// the signal. Everything reachable from Handle() is async-signal-safe.
#include "crash/signal_handler.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/guarded_allocator.h"
#include "crash/backtrace.h"
#include "crash/describe.h"
#include "crash/printer.h"
#include "crash/report_event.h"
#include "crash/report_file.h"
#include "crash/writer.h"

namespace mate {

namespace {

struct sigaction g_prev_segv;
struct sigaction g_prev_bus;
bool g_installed = false;
int g_reporting = 0;
constexpr size_t kAltStackBytes = 256 * 1024;
constexpr int kPrinterTimeoutMs = 20000;
char g_json[160 * 1024];
char g_event_file[4200];
NativeFrame g_frames[kMaxNativeFrames];

AccessType AccessOf(void* uctx) {
#if defined(__x86_64__)
  const ucontext_t* uc = static_cast<const ucontext_t*>(uctx);
  // Page-fault error code: bit 1 set for a write.
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? AccessType::kWrite : AccessType::kRead;
#else
  (void)uctx;
  return AccessType::kUnknown;
#endif
}

void RestoreDefault(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// Faults that are not ours go where they went before mate-guard: Node's
// WebAssembly trap handler, or the default action.
void Chain(int sig, siginfo_t* info, void* uctx) {
  const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, uctx);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default: return and let the instruction fault again without us.
  RestoreDefault(sig);
}

bool WriteEvent(const Violation& v, bool rewrite) {
  Writer j(g_json, sizeof(g_json));
  FormatEvent(v, &j);
  if (rewrite) return RewriteReportFile(g_event_file, j.data(), j.size());
  g_event_file[0] = '\0';
  return WriteReportFile(j.data(), j.size(), g_event_file, sizeof(g_event_file));
}

void Report(Violation* v, void* uctx) {
  // The event is on disk before the unwinder touches a possibly damaged
  // stack: if the unwind faults (SIGSEGV is blocked here, the kernel kills
  // the process), the run's owner still finds the report.
  bool written = WriteEvent(*v, false);
  v->access_frames = g_frames;
  v->access_frame_count = CaptureFaultBacktrace(uctx, g_frames, kMaxNativeFrames, &v->unwind);
  if (written) WriteEvent(*v, true);
  if (!written || !RunPrinter(g_event_file, kPrinterTimeoutMs)) PrintFallback(*v, written ? g_event_file : nullptr);
}

void Handle(int sig, siginfo_t* info, void* uctx) {
  const GuardedAllocator* a = GuardedAllocator::Instance();
  uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  Violation v;
  if (a == nullptr || !DescribeFault(*a, addr, AccessOf(uctx), &v)) {
    Chain(sig, info, uctx);
    return;
  }
  // One report at a time; other threads faulting meanwhile wait their turn.
  while (__atomic_exchange_n(&g_reporting, 1, __ATOMIC_ACQUIRE)) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, nullptr);
  }
  v.signal = sig;
  Report(&v, uctx);
  // Die by the signal, as the program would have without us: the faulting
  // instruction runs again with the default action in place.
  RestoreDefault(SIGSEGV);
  RestoreDefault(SIGBUS);
}

}  // namespace

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

bool InstallFaultHandler() {
  EnsureAltStack();
  if (g_installed) return true;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = Handle;
  // No SA_NODEFER: a fault inside the handler itself must kill, not recurse.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_prev_segv) != 0) return false;
  if (sigaction(SIGBUS, &sa, &g_prev_bus) != 0) return false;
  g_installed = true;
  return true;
}

}  // namespace mate
