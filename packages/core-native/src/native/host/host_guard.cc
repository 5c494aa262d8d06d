#include "host/host_guard.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "binding/event_json.h"
#include "report/format/escape.h"
#include "core/alloc_log.h"
#include "core/guarded_allocator.h"
#include "core/stack_store.h"
#include "crash/backtrace.h"
#include "crash/describe.h"
#include "crash/signal_handler.h"
#include "device/embed/python_site.h"
#include "native_heap/native_heap.h"
#include "options/handoff_reader.h"
#include "platform/linux/module_map.h"
#include "platform/loaded_modules.h"
#include "platform/private_files.h"
#include "platform/stack_trace.h"
#include "report/printer.h"
#include "report/report_file.h"

namespace mate {
namespace host {
namespace {

constexpr int kPrinterTimeoutMs = 20000;
constexpr size_t kFrames = 32;
// Python frames of a host block: the innermost ones (the user's code and a
// few of the runner's). Each frame walked costs at every allocation and
// free (and a stack not seen before, its line lookups): 16 frames cost
// numpy's own suite 0.3-0.5 s of CPU more than 8 (bench/README.md), and
// past 8 they are pytest's own.
constexpr int kPythonFrames = 8;

// Set once at install (under g_mu), read on every numpy allocation and free.
std::atomic<GuardedAllocator*> g_allocator{nullptr};
std::mutex g_mu;  // install, pending events
struct Pending {
  Violation violation;  // plain data: for the headline where the printer cannot run
  std::string json;
};
std::vector<Pending> g_pending;  // damage found at frees made without the GIL, filed at the next check
std::atomic<uint64_t> g_violations{0};
std::atomic<uint64_t> g_numpy_allocations{0};
std::atomic<uint64_t> g_numpy_foreign{0};
std::atomic<uint64_t> g_numpy_fallbacks{0};
std::atomic<uint64_t> g_numpy_before_install_freed{0};
std::atomic<uint64_t> g_numpy_unguarded{0};
bool g_capture = true;
// Native frames of a numpy allocation: ours skipped, the walk stops in the
// interpreter (libpython: its frames are the Python stack's business).
uintptr_t g_own_lo = 0, g_own_hi = 0, g_stop_lo = 0, g_stop_hi = 0;
int (*g_gil_held)() = nullptr;  // PyGILState_Check, found at install

// The Python stack of the calling thread, only where it holds the GIL: an
// allocation made with the GIL released (an extension's worker thread)
// never waits for it.
uint32_t PythonStackIfHeld() {
  if (!g_capture || g_gil_held == nullptr || g_gil_held() != 1) return 0;
  return device::CapturePythonStackUpTo(kPythonFrames);
}

uint32_t NativeFrames() {
  if (!g_capture) return 0;
  uintptr_t pcs[kFrames];
  size_t n = platform::CaptureStack(pcs, kFrames, g_own_lo, g_own_hi, g_stop_lo, g_stop_hi);
  return StackStore::Get().InternFrames(pcs, n);
}

// Files an event and prints it (the printer, else the fallback headline).
void FileAndPrint(const std::string& json, const Violation* v) {
  char path[4200];
  bool filed = WriteReportFile(json.data(), json.size(), path, sizeof(path));
  if (filed && RunPrinter(path, kPrinterTimeoutMs)) return;
  if (v != nullptr) PrintFallback(*v, filed ? path : "");
}

// A violation found at a free: filed and printed at once where the freeing
// thread holds the GIL (numpy frees an array's data so), so a script sees
// its report when the damage is found, not at exit, and it is on disk
// should the process be killed; queued for the next check otherwise (a
// thread outside Python's knowledge is not made to wait for the printer).
// Either way before the free returns or at the next check, so a test's
// end finds what its own frees found.
void FileNowOrAtCheck(const Violation& v) {
  std::string event = EventJson(v);
  if (g_gil_held != nullptr && g_gil_held() == 1) {
    FileAndPrint(event, &v);
    g_violations.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_pending.push_back({v, std::move(event)});
}

// Canary damage found when a freed block is checked (any thread).
void OnFreeViolation(const CanaryViolation& violation) {
  FileNowOrAtCheck(DescribeCanary(*g_allocator.load(std::memory_order_acquire), violation));
}

// A chosen module's double or invalid free (any thread): filed as canary damage found at a free is.
void OnNativeBadFree(const native_heap::Finding& f) {
  FileNowOrAtCheck(DescribeFinding(*g_allocator.load(std::memory_order_acquire), f));
}

}  // namespace

// This process's own report folder (none was given), and its removal at
// exit when it holds nothing (rmdir refuses a folder with a report in it).
static std::string g_own_dir;
static void RemoveOwnDirIfEmpty() { rmdir(g_own_dir.c_str()); }

bool Install(const char* handoff_json, const InstallPaths& paths, std::string* error) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_allocator.load(std::memory_order_acquire) != nullptr) return true;
  Handoff h;
  if (handoff_json == nullptr || !ReadHandoff(handoff_json, &h, error)) {
    if (handoff_json == nullptr) *error = "no settings given";
    return false;
  }
  Options options = h.options;
  options.quarantine_max_bytes = QuarantineBytes(options, kHostQuarantineBytes);
  // The folder given; else the one the device guard of this process picked;
  // else a fresh one of this process's own under <tmp>/mate-guard-<uid>/
  // (never a shared fixed folder), removed at exit when nothing was filed.
  std::string dir = h.report_dir;
  if (!dir.empty()) {
    if (!platform::MakeReportDir(dir, error)) return false;
  } else if (*ReportDir() != '\0') {
    dir = ReportDir();
  } else {
    std::string why;
    if (!platform::FreshPrivateDir(("pid-" + std::to_string(getpid()) + "-").c_str(), &dir, &why)) {
      *error = "no report folder: " + why;
      return false;
    }
    g_own_dir = dir;
    atexit(RemoveOwnDirIfEmpty);
  }
  if (*ReportDir() == '\0') SetReportDir(dir.c_str());
  SetReportFd(paths.report_fd);
  const char* path_env = getenv("PATH");
  ConfigurePrinter(path_env ? path_env : "", false);
  ConfigureNativePrinter();  // mate-guard-print, beside this library
  GuardedAllocator* a = GuardedAllocator::Create(options, error);
  if (a == nullptr) return false;
  if (!InstallFaultHandler()) {
    *error = "could not install the SIGSEGV/SIGBUS handler";
    return false;
  }
  a->SetFreeViolationSink(OnFreeViolation);
  g_capture = options.capture_stacks;
  device::SetPythonStacks(options.capture_stacks);
  g_gil_held = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_Check"));
  platform::ObjectRange(reinterpret_cast<const void*>(&Install), &g_own_lo, &g_own_hi);
  if (void* py = dlsym(RTLD_DEFAULT, "Py_IsInitialized")) platform::ObjectRange(py, &g_stop_lo, &g_stop_hi);
  platform::WarmUpStackTrace();
  // The handler resolves frames through the module map and must never load
  // the unwinder itself: both are made ready now.
  RefreshModuleMap(true);
  WarmUpBacktrace();
  g_allocator.store(a, std::memory_order_release);
  return true;
}

bool Active() { return g_allocator.load(std::memory_order_acquire) != nullptr; }

void* Allocate(size_t size, bool zero) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) return nullptr;
  AllocRequest req;
  req.size = size;
  req.stack_id = PythonStackIfHeld();
  req.frames_id = NativeFrames();
  req.backend = SlotBackend::kHost;
  AllocResult r = a->Allocate(req);
  if (r.ptr == nullptr) return nullptr;
  g_numpy_allocations.fetch_add(1, std::memory_order_relaxed);
  // A slot's data pages may hold canary fill from a primer: calloc's promise is kept here.
  if (zero) memset(r.ptr, 0, size);
  if (a->options().log_allocations)
    LogAlloc(r.id, reinterpret_cast<uintptr_t>(r.ptr), size, r.mapped, a->options().mode, "host", a->CurrentTest());
  return r.ptr;
}

bool Free(void* ptr) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr || !a->InRegion(reinterpret_cast<uintptr_t>(ptr))) return false;
  FreeRequest req;
  req.ptr = ptr;
  req.by = FreedBy::kExplicit;
  req.stack_id = PythonStackIfHeld();
  req.frames_id = NativeFrames();
  req.backend = SlotBackend::kHost;
  FreeResult r = a->Free(req);
  if (r.status == FreeStatus::kFreed) {
    if (a->options().log_allocations)
      LogFree(r.record.alloc_id, reinterpret_cast<uintptr_t>(ptr), r.record.size, r.record.mode, "host",
              a->CurrentTest());
  } else if (r.status == FreeStatus::kDoubleFree || r.status == FreeStatus::kInvalidFree) {
    // numpy frees each block once: a second free means the block was
    // freed behind numpy's back (an extension's free() of an array's data,
    // already reported as an invalid free by the native heap); ignored.
    FileNowOrAtCheck(DescribeBadFree(*a, r.status == FreeStatus::kDoubleFree, r.record.alloc_id ? &r.record : nullptr,
                                     reinterpret_cast<uintptr_t>(ptr), req.frames_id, a->CurrentTest()));
  }
  return true;
}

bool LiveSize(const void* ptr, size_t* size) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr || !a->InRegion(reinterpret_cast<uintptr_t>(ptr))) return false;
  if (!a->LiveSize(ptr, size)) *size = 0;
  return true;
}

bool GuardNative(const std::vector<std::string>& globs, std::string* error) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) {
    *error = "the host guard is not installed";
    return false;
  }
  native_heap::StartOptions options;
  options.globs = globs;
  options.sample_rate = a->options().native_sample_rate;
  options.site_first = a->options().native_site_first;
  options.log = a->options().log_allocations;
  options.on_new_thread = EnsureAltStack;
  options.js_stack = PythonStackIfHeld;
  options.on_bad_free = OnNativeBadFree;
  return native_heap::Start(a, options, error);
}

void SetCurrentTest(const char* name) {
  uint32_t id = name && *name ? StackStore::Get().Intern(name, strlen(name)) : 0;
  SetCurrentTestId(id);
  if (!Active()) return;
  if (id != 0) {
    KeepFaultHandlerFirst();
    RefreshModuleMap();  // extension modules imported since: their frames named in reports
    if (native_heap::Active()) native_heap::Refresh();
  }
}

size_t Check(bool all) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) return 0;
  // Checks first: they also check freed blocks still waiting to be closed,
  // whose damage reaches g_pending.
  std::vector<CanaryViolation> now = all ? a->CheckAll() : a->CheckRecent();
  std::vector<Pending> found;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    found.swap(g_pending);
  }
  if (native_heap::Active()) {
    native_heap::Refresh();
    for (const native_heap::Finding& f : native_heap::TakeFindings()) {
      Violation v = DescribeFinding(*a, f);
      found.push_back({v, EventJson(v)});
    }
  }
  for (const CanaryViolation& c : now) {
    Violation v = DescribeCanary(*a, c);
    found.push_back({v, EventJson(v)});
  }
  for (const Pending& p : found) FileAndPrint(p.json, &p.violation);
  g_violations.fetch_add(found.size(), std::memory_order_relaxed);
  return found.size();
}

void CountNumpyForeign() { g_numpy_foreign.fetch_add(1, std::memory_order_relaxed); }
void CountNumpyFallback() { g_numpy_fallbacks.fetch_add(1, std::memory_order_relaxed); }
void CountNumpyBeforeInstallFreed() { g_numpy_before_install_freed.fetch_add(1, std::memory_order_relaxed); }
void CountNumpyUnguarded() { g_numpy_unguarded.fetch_add(1, std::memory_order_relaxed); }

std::string StatsJson() {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) return "";
  AllocatorStats s = a->Stats();
  native_heap::Counters nc = native_heap::GetCounters();
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::string reason;
  for (const char* p = s.last_fallback_reason; p && *p; p++)
    if (*p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) reason.push_back(*p);
  char buf[2048];
  int n = snprintf(buf, sizeof(buf),
                   "{\"pid\":%d,\"allocations\":%llu,\"frees\":%llu,\"live\":%llu,\"peakLive\":%llu,\"liveBytes\":%llu,"
                   "\"fallbacks\":%llu,\"fallbackReason\":%s%s%s,\"quarantined\":%llu,\"quarantinedBytes\":%llu,"
                   "\"violations\":%llu,\"guardMethod\":\"%s\",\"nativeAllocations\":%llu,\"nativeUnguarded\":%llu,"
                   "\"nativeForeignFrees\":%llu,\"nativeBadFrees\":%llu,\"nativeRoutedFrees\":%llu,"
                   "\"numpy\":{\"allocations\":%llu,\"foreignFrees\":%llu,\"fallbacks\":%llu,"
                   "\"beforeInstallFreed\":%llu,\"unguarded\":%llu}}",
                   static_cast<int>(getpid()), u(s.allocations), u(s.frees), u(s.live), u(s.peak_live), u(s.live_bytes),
                   u(s.fallbacks), reason.empty() ? "" : "\"", reason.empty() ? "null" : reason.c_str(),
                   reason.empty() ? "" : "\"", u(s.quarantined), u(s.quarantined_bytes), u(g_violations.load()),
                   GuardMethodName(s.guard_method), u(s.native_allocations), u(nc.unguarded), u(nc.foreign_frees),
                   u(nc.bad_frees), u(nc.routed_frees), u(g_numpy_allocations.load()), u(g_numpy_foreign.load()),
                   u(g_numpy_fallbacks.load()), u(g_numpy_before_install_freed.load()), u(g_numpy_unguarded.load()));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return "";
  std::string out(buf, n - 1);  // the closing brace comes after the globs
  // The native-heap globs that matched no loaded module yet: a typo guards
  // nothing, and the Python side warns of it as the Node runners do.
  out += ",\"nativeUnmatched\":[";
  std::vector<std::string> unmatched =
      native_heap::Active() ? native_heap::UnmatchedGlobs() : std::vector<std::string>{};
  for (size_t i = 0; i < unmatched.size(); i++) {
    if (i) out += ',';
    out += JsonQuote(unmatched[i]);
  }
  out += "]}";
  return out;
}

}  // namespace host
}  // namespace mate
