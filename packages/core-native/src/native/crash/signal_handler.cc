// Everything reachable from Handle() is async-signal-safe.
//
// When is a signal that is not a guard fault a death? The previous
// disposition decides, as it would have without mate-guard:
// - the default action (Node leaves SIGABRT, SIGBUS, SIGFPE, SIGILL and
//   SIGTRAP so): death;
// - ignored: death only for a fault the kernel raised (it does not let one
//   be ignored); a signal another process sent is ignored;
// - a handler (Node's SIGSEGV trap handler): it runs first, and decides.
//   A WebAssembly bounds trap is handled (the pc moved to V8's landing pad)
//   and returns: no report. Anything else it leaves to die: Node's resets
//   the default action and raises the signal again (now pending, since it
//   is blocked while we run), another handler may reset the default and
//   return so the fault repeats. Either is seen when it returns (pending,
//   or default now for a fault), and only then is the report written; the
//   signal is delivered after we return.
// Deciding after the previous handler returned, rather than waiting for
// the fault to repeat, keeps one handler invocation per death; a handler
// that never returns (exits, longjmps) leaves no report, as it wanted.
// abort() is the one exception: glibc kills the process after the handler
// returns whatever it did, so a SIGABRT this process sent itself is a death.
#include "crash/signal_handler.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/guarded_allocator.h"
#include "crash/backtrace.h"
#include "crash/death.h"
#include "crash/describe.h"
#include "crash/fault_continuation.h"
#include "report/printer.h"
#include "report/report_event.h"
#include "report/report_file.h"
#include "crash/terminate_hook.h"
#include "report/writer.h"
#include "platform/linux/machine_context.h"
#include "platform/signals.h"

namespace mate {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP};
constexpr size_t kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
platform::PreviousAction g_previous[kSignalCount];
bool g_installed = false;
long g_reporter = 0;  // thread id writing a report, 0 when none
long g_chaining = 0;  // thread id inside the previous handler, 0 when none
constexpr int kPrinterTimeoutMs = 20000;
char g_json[160 * 1024];
char g_event_file[4200];
NativeFrame g_frames[kMaxNativeFrames];
uintptr_t g_cfas[kMaxNativeFrames];
DeathDetail g_death;
char g_fault_note[1024];
size_t g_fault_note_len = 0;  // written before the code it speaks of runs (SetFaultNote), read in the handler
pid_t g_fault_note_pid = 0;   // the process it speaks of: not a forked child, which inherits it

long ThreadId() { return static_cast<long>(syscall(SYS_gettid)); }

const platform::PreviousAction* PreviousOf(int sig) {
  for (size_t i = 0; i < kSignalCount; i++)
    if (kSignals[i] == sig) return &g_previous[i];
  return nullptr;
}

AccessType AccessOf(const void* uctx) {
  switch (ReadFaultAccess(uctx)) {
    case FaultAccess::kRead:
      return AccessType::kRead;
    case FaultAccess::kWrite:
      return AccessType::kWrite;
    case FaultAccess::kUnknown:
      break;
  }
  return AccessType::kUnknown;
}

// One report at a time; other threads dying meanwhile wait their turn (the
// process ends with the first). False: this thread is already reporting
// (the report's own code died): no second report.
bool Lock() {
  long me = ThreadId();
  if (__atomic_load_n(&g_reporter, __ATOMIC_ACQUIRE) == me) return false;
  long none = 0;
  while (!__atomic_compare_exchange_n(&g_reporter, &none, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    none = 0;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, nullptr);
  }
  return true;
}

bool WriteEvent(const Violation& v, bool rewrite) {
  Writer j(g_json, sizeof(g_json));
  FormatEvent(v, &j);
  if (rewrite) return RewriteReportFile(g_event_file, j.data(), j.size());
  g_event_file[0] = '\0';
  return WriteReportFile(j.data(), j.size(), g_event_file, sizeof(g_event_file));
}

// The event is on disk before the unwinder touches a possibly damaged
// stack: if the unwind faults (the crash signals are blocked here, so the
// kernel kills the process), the run's owner still finds the report.
void Report(Violation* v, void* uctx) {
  bool written = WriteEvent(*v, false);
  v->access_frames = g_frames;
  v->access_frame_count = CaptureFaultBacktrace(uctx, g_frames, kMaxNativeFrames, &v->unwind, g_cfas);
  const GuardedAllocator* a = GuardedAllocator::Instance();
  if (v->death != nullptr && a != nullptr)
    FindGuardedFree(*a, uctx, g_frames, g_cfas, v->access_frame_count, &g_death, v);
  if (written) WriteEvent(*v, true);
  if (!written || !RunPrinter(g_event_file, kPrinterTimeoutMs)) PrintFallback(*v, written ? g_event_file : nullptr);
}

bool Dying(int sig, siginfo_t* info, void* uctx) {
  const platform::PreviousAction* prev = PreviousOf(sig);
  if (prev == nullptr) return false;
  switch (platform::KindOf(*prev)) {
    case platform::PreviousKind::kDefault:
      return true;
    case platform::PreviousKind::kIgnore:
      return platform::IsSynchronous(info);
    case platform::PreviousKind::kHandler:
      __atomic_store_n(&g_chaining, ThreadId(), __ATOMIC_RELEASE);
      platform::CallPrevious(*prev, sig, info, uctx);
      __atomic_store_n(&g_chaining, 0, __ATOMIC_RELEASE);
      if (platform::SignalPending(sig)) return true;
      if (platform::IsSynchronous(info) && platform::DispositionIsDefault(sig)) return true;
      return sig == SIGABRT && platform::SenderPid(info) == getpid();
  }
  return false;
}

void Handle(int sig, siginfo_t* info, void* uctx) {
  // Called back by the handler we chain to: one installed after ours that
  // keeps ours as its previous (KeepFaultHandlerFirst put ours in front of
  // it). It decides for itself; going round again would never end.
  if (__atomic_load_n(&g_chaining, __ATOMIC_ACQUIRE) == ThreadId()) return;
  const GuardedAllocator* a = GuardedAllocator::Instance();
  if ((sig == SIGSEGV || sig == SIGBUS) && a != nullptr) {
    Violation v;
    if (DescribeFault(*a, reinterpret_cast<uintptr_t>(info->si_addr), AccessOf(uctx), &v)) {
      if (Lock()) {
        v.signal = sig;
        Report(&v, uctx);
        size_t note = __atomic_load_n(&g_fault_note_len, __ATOMIC_ACQUIRE);
        if (note > 0 && g_fault_note_pid == getpid()) PrintToReportFd(g_fault_note, note);
        ContinueAfterFault();  // returns when there is none (or it could not start)
      }
      // Die by the signal, as the program would have without us: the
      // faulting instruction runs again with the default action in place.
      platform::RestoreDefault(SIGSEGV);
      platform::RestoreDefault(SIGBUS);
      return;
    }
  }
  if (!Dying(sig, info, uctx)) return;
  if (Lock()) {
    Violation v;
    DescribeDeath(a, sig, info, uctx, &g_death, &v);
    Report(&v, uctx);
  }
  // Dies when the handler returns: the signal is raised again with the
  // default action (a fault would repeat, but a trap or a sent signal not).
  platform::RestoreDefault(sig);
  if (!platform::SignalPending(sig)) raise(sig);
}

}  // namespace

void EnsureAltStack() { platform::EnsureAltStack(); }

void SetFaultNote(const char* line) {
  size_t n = line ? strlen(line) : 0;
  if (n > sizeof(g_fault_note)) n = sizeof(g_fault_note);
  __atomic_store_n(&g_fault_note_len, 0, __ATOMIC_RELEASE);
  if (n > 0) memcpy(g_fault_note, line, n);
  g_fault_note_pid = getpid();
  __atomic_store_n(&g_fault_note_len, n, __ATOMIC_RELEASE);
}

bool InstallFaultHandler() {
  EnsureAltStack();
  if (g_installed) return true;
  PrepareDeathReports();
  InstallTerminateHook();
  for (size_t i = 0; i < kSignalCount; i++)
    // The others blocked too: a crash inside the report kills at once.
    if (!platform::InstallSignalHandler(kSignals[i], Handle, kSignals, kSignalCount, &g_previous[i])) return false;
  g_installed = true;
  return true;
}

void KeepFaultHandlerFirst() {
  if (!g_installed) return;
  // process.on('SIGABRT') (signal-exit, loaded by Jest's cache writer and
  // many CLIs) makes libuv install its own handler over ours; without this a
  // later abort() leaves no report. Ours goes back in front, libuv's behind it.
  for (size_t i = 0; i < kSignalCount; i++)
    if (!platform::HandlerIs(kSignals[i], Handle))
      platform::InstallSignalHandler(kSignals[i], Handle, kSignals, kSignalCount, &g_previous[i]);
}

}  // namespace mate
