// libmate_guard_cuda.so: the device guard without Node, for PyTorch (its
// pluggable-allocator hooks) and any other process `mate guard-run
// --device cuda` starts. Settings come from the run's handoff
// (MATE_GUARD_SETTINGS); each violation is filed in the run's report
// directory as an event and printed by the report printer
// (mate-guard-print beside this library), or by guard-run at the end when
// the printer cannot run. The counters go to the directory at exit for the summary.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "core/process_state.h"
#include "core/stack_store.h"
#include "platform/private_files.h"
#include "report/printer.h"
#include "report/report_file.h"
#include "device/embed/c_api.h"
#include "device/device_guard.h"
#include "device/allocator/device_ipc.h"
#include "device/device_report.h"
#include "options/handoff_reader.h"
#include "device/allocator/device_options.h"
#include "device/launch/launch_tracker.h"
#include "device/embed/python_site.h"
#include "device/embed/torch_oom.h"

namespace mate {
namespace device {
namespace {

class PrintingSink : public EventSink {
 public:
  void OnEvent(const DeviceEvent& e) override {
    std::string json = DeviceEventJson(e);
    std::lock_guard<std::mutex> lock(mu_);
    FileAndPrint(e, json);
  }

 private:
  std::mutex mu_;
};

PrintingSink g_sink;
std::once_flag g_once;
int g_status = -1;  // 0 installed, 1 failed
std::string g_error;
bool g_finished = false;
bool g_owned = false;
std::string g_report_dir;
// The report folder is this process's own (none was given): it goes at exit when it holds no report.
bool g_own_dir = false;

// A message as the inside of a JSON string (ours are plain text).
std::string JsonSafe(const char* s) {
  std::string out;
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(*s) >= 0x20) out.push_back(*s);
  }
  return out;
}

// The counters as JSON, as the Node processes write them for the run
// summary (and as the Python API's stats() returns them); `exited` false:
// the first, written at install, so a process killed later (a time limit,
// SIGKILL) is still known to have been guarded.
std::string StatsJson(const DeviceStats& s, bool exited) {
  char buf[4096];
  int n = snprintf(
      buf, sizeof(buf),
      "{\"pid\":%d,\"threadId\":0,\"exited\":%s,\"allocations\":%llu,\"frees\":%llu,\"live\":%llu,\"peakLive\":%llu,"
      "\"liveBytes\":%llu,\"fallbacks\":%llu,\"fallbackReason\":%s%s%s,"
      "\"quarantined\":%llu,\"quarantinedBytes\":%llu,\"reservedBytes\":0,\"maxLive\":0,\"violations\":%llu,"
      "\"guardMethod\":\"cuda-vmm\",\"nativeAllocations\":0,\"nativeUnguarded\":0,\"nativeForeignFrees\":0,"
      "\"nativeBadFrees\":0,\"skippedByTag\":0,\"passThrough\":{\"resizable\":0,\"shared\":0,\"subclass\":0,"
      "\"tooLarge\":0},"
      "\"device\":{\"api\":\"cuda\",\"granule\":%llu,\"physicalBytes\":%llu,\"chunksCreated\":%llu,\"readyHits\":%llu,"
      "\"readyMisses\":%llu,\"recycled\":%llu,\"outOfMemory\":%llu,\"sharedIpc\":%llu,\"launchTracking\":%s,"
      "\"trackingOff\":\"%s\"}}",
      static_cast<int>(getpid()), exited ? "true" : "false", (unsigned long long)s.allocations,
      (unsigned long long)s.frees, (unsigned long long)s.live, (unsigned long long)s.peak_live,
      (unsigned long long)s.live_bytes, (unsigned long long)s.fallbacks, s.last_fallback_reason ? "\"" : "",
      s.last_fallback_reason ? JsonSafe(s.last_fallback_reason).c_str() : "null", s.last_fallback_reason ? "\"" : "",
      (unsigned long long)s.quarantined, (unsigned long long)s.quarantined_bytes, (unsigned long long)s.violations,
      (unsigned long long)s.granule, (unsigned long long)s.physical_bytes, (unsigned long long)s.chunks_created,
      (unsigned long long)s.ready_hits, (unsigned long long)s.ready_misses, (unsigned long long)s.recycled,
      (unsigned long long)s.out_of_memory, (unsigned long long)s.exported, TrackingOn() ? "true" : "false",
      JsonSafe(TrackingOff()).c_str());
  return std::string(buf, n > 0 && static_cast<size_t>(n) < sizeof(buf) ? n : 0);
}

void WriteStats(const DeviceStats& s, bool exited) {
  char path[4200], tmp[4210];
  snprintf(path, sizeof(path), "%s/stats-%d-0.json", g_report_dir.c_str(), static_cast<int>(getpid()));
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  int fd = mate::platform::OpenNewFile(tmp);
  if (fd < 0) return;
  dprintf(fd, "%s\n", StatsJson(s, exited).c_str());
  close(fd);
  rename(tmp, path);
}

// This process's own folder, at exit: removed when it holds only its counters (a clean run leaves nothing).
void RemoveOwnDirIfClean() {
  if (!g_own_dir) return;
  std::string stats = "stats-" + std::to_string(getpid()) + "-0.json";
  DIR* d = opendir(g_report_dir.c_str());
  if (d == nullptr) return;
  bool clean = true;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != ".." && name != stats) clean = false;
  }
  closedir(d);
  if (!clean) return;
  unlink((g_report_dir + "/" + stats).c_str());
  rmdir(g_report_dir.c_str());
}

void InstallOnce() {
  Handoff h;
  const char* raw = getenv("MATE_GUARD_SETTINGS");
  if (raw == nullptr || *raw == '\0') {
    g_error = "MATE_GUARD_SETTINGS is not set: run the program under `mate guard-run --device cuda`";
    g_status = 1;
    return;
  }
  if (!ReadHandoff(raw, &h, &g_error)) {
    g_status = 1;
    return;
  }
  // A Python process has no test boundaries to fail at: by default a free
  // does not wait for the GPU; its check runs as soon as the freeing
  // stream's work is done (same finding, a moment later).
  DeviceConfig config = DeviceConfigFrom(h.options, false);
  g_owned = h.owned;
  // No folder given (the Python library alone): a fresh one of this process's own, under <tmp>/mate-guard-<uid>/.
  std::string dir = h.report_dir;
  if (dir.empty()) {
    std::string why;
    if (!mate::platform::FreshPrivateDir(("pid-" + std::to_string(getpid()) + "-").c_str(), &dir, &why)) {
      g_error = "no report folder: " + why;
      g_status = 1;
      return;
    }
    g_own_dir = true;
  } else if (!mate::platform::MakeReportDir(dir, &g_error)) {
    g_status = 1;
    return;
  }
  SetReportDir(dir.c_str());
  g_report_dir = dir;
  const char* path = getenv("PATH");
  ConfigurePrinter(path ? path : "", false);
  ConfigureNativePrinter();
  SetPythonStacks(h.options.capture_stacks);
  // Python stacks of allocations, launches and frees (`del x`, a tensor
  // dropped at scope exit): where the GIL is held or can be taken back;
  // threads Python never ran on (autograd's) have none.
  SetStackProvider(&CapturePythonStack);
  SetSiteProvider(&CapturePythonStack);
  SetFreeStackProvider(&CapturePythonStack);
  g_status = Install(config, &g_sink, &g_error) ? 0 : 1;
  if (g_status == 0) WriteStats(DeviceStats{}, false);
}

bool EnsureInstalled() {
  std::call_once(g_once, InstallOnce);
  return g_status == 0;
}

void Finish() {
  if (g_status != 0 || g_finished) return;
  g_finished = true;
  SetPythonStacks(false);  // the interpreter is going away
  TrackerStats t = GetTrackerStats();
  PythonSiteStats py = GetPythonSiteStats();
  ShutdownAll();
  DeviceStats s = TotalStats();
  WriteStats(s, true);
  RemoveOwnDirIfClean();
  if (getenv("MATE_GUARD_CUDA_STATS") != nullptr) {  // diagnostics for tuning (bench/)
    dprintf(2,
            "[mate-guard] cuda stats: allocations=%llu peakLive=%llu readyHits=%llu readyMisses=%llu recycled=%llu "
            "windowFills=%llu filledAhead=%llu MiB "
            "chunks=%llu physical=%llu MiB fallbacks=%llu allocMs=%.1f freeMs=%.1f backgroundMs=%.1f "
            "launches=%llu (parameters not read %llu) guardedArgs=%llu trackMs=%.1f (call sites %.1f, arguments %.1f) "
            "launchCallMs=%.1f tracking=%s "
            "pySites=%llu (GIL taken back %llu, new %llu, read from the frames %llu, no frame %llu, %llu of them "
            "without the GIL) pyMs=%.1f (GIL "
            "wait %.1f) passes=%llu fenceRecords=%llu "
            "fenceQueries=%llu freeWaits=%llu (%.1f ms) allocatorLockWaits=%llu (%.1f ms) trackerLockWaits=%llu "
            "(%.1f ms) callbacks=%llu launches, %llu ordering, %llu the guard's own\n",
            (unsigned long long)s.allocations, (unsigned long long)s.peak_live, (unsigned long long)s.ready_hits,
            (unsigned long long)s.ready_misses, (unsigned long long)s.recycled, (unsigned long long)s.window_fills,
            (unsigned long long)(s.filled_ahead_bytes >> 20), (unsigned long long)s.chunks_created,
            (unsigned long long)(s.physical_bytes >> 20), (unsigned long long)s.fallbacks, s.alloc_ns / 1e6,
            s.free_ns / 1e6, s.background_ns / 1e6, (unsigned long long)t.launches, (unsigned long long)t.no_layout,
            (unsigned long long)t.guarded_args, t.ns / 1e6, t.site_ns / 1e6, t.args_ns / 1e6, t.call_ns / 1e6,
            TrackingOn()     ? "on"
            : *TrackingOff() ? TrackingOff()
                             : "off",
            (unsigned long long)py.captures, (unsigned long long)py.gil_taken, (unsigned long long)py.new_stacks,
            (unsigned long long)py.raw, (unsigned long long)py.empty, (unsigned long long)py.no_gil_needed, py.ns / 1e6,
            py.ensure_ns / 1e6, (unsigned long long)s.passes, (unsigned long long)s.fence_records,
            (unsigned long long)s.fence_queries, (unsigned long long)s.free_waits, s.free_wait_ns / 1e6,
            (unsigned long long)s.lock_waits, s.lock_wait_ns / 1e6, (unsigned long long)t.lock_waits,
            t.lock_wait_ns / 1e6, (unsigned long long)t.launch_callbacks, (unsigned long long)t.ordering_callbacks,
            (unsigned long long)t.own_callbacks);
    if (TrackingOn()) dprintf(2, "[mate-guard] cuda tracking via %s\n", TrackingVia().c_str());
  }
  // Alone (no run owner to sum up the run), warn here, once.
  if (s.fallbacks && !g_owned)
    dprintf(2, "[mate-guard] warning: %llu allocation%s ran unguarded: %s\n", (unsigned long long)s.fallbacks,
            s.fallbacks == 1 ? "" : "s", s.last_fallback_reason ? s.last_fallback_reason : "unknown reason");
}

}  // namespace
}  // namespace device
}  // namespace mate

using namespace mate::device;

#define MATE_EXPORT extern "C" __attribute__((visibility("default")))

// 0 when the guard is on; otherwise mate_guard_install_error() says why.
MATE_EXPORT int mate_guard_install_from_env() {
  if (!EnsureInstalled()) return 1;
  atexit(Finish);  // after the driver's handlers were registered: runs before them
  return 0;
}

MATE_EXPORT const char* mate_guard_install_error() { return g_error.c_str(); }

// The folder this process files its reports in (the one given, or its own under <tmp>/mate-guard-<uid>/).
// The folder reports are filed in: the device guard's, else (no GPU) the host guard's.
MATE_EXPORT const char* mate_guard_report_dir() {
  return g_report_dir.empty() ? mate::ReportDir() : g_report_dir.c_str();
}

// Why launch tracking is off ("" when on): the Python hook warns once.
MATE_EXPORT const char* mate_guard_tracking_off() { return TrackingOff(); }

// Stops the background threads, finishes pending checks and writes the
// counters. Python calls it from atexit, before the interpreter tears down.
MATE_EXPORT void mate_guard_shutdown() { Finish(); }

MATE_EXPORT void mate_guard_set_current_test(const char* name) {
  uint32_t id = name && *name ? mate::StackStore::Get().Intern(name, strlen(name)) : 0;
  mate::SetCurrentTestId(id);
}

// The end of a test where no Node binding does it (the pytest plugin):
// waits for the work queued in this thread's context, so kernels' last
// writes have reached the canaries and a faulting kernel has faulted,
// checks the canaries of frees still pending (so a free need not wait for
// the GPU to fail its test), then looks for a sticky error (reported once,
// naming `where`). 0, or the
// sticky CUresult after which the process's CUDA context is lost;
// MATE_GUARD_NOT_INSTALLED (-1) when the guard is off.
MATE_EXPORT int mate_guard_check_device(const char* where) {
  if (g_status != 0) return -1;
  const char* at = where && *where ? where : "the check after the test";
  int r = Driver()->cuCtxSynchronize();
  bool lost = mate::cuda::IsSticky(r);
  if (lost) OnStickyError(r, at, 0);
  else CheckPendingAll();
  CheckHealthAll(at);
  return lost ? r : 0;
}

// The counters now (the DeviceStats of every device, as JSON); "" when the
// guard is off. Valid until the calling thread's next call.
MATE_EXPORT const char* mate_guard_stats_json() {
  static thread_local std::string json;
  json = g_status == 0 ? StatsJson(TotalStats(), false) : std::string();
  return json.c_str();
}

// torch.cuda.memory.CUDAPluggableAllocator(lib, "mate_guard_torch_alloc", "mate_guard_torch_free").
MATE_EXPORT void* mate_guard_torch_alloc(ssize_t size, int device, void* stream) {
  if (!EnsureInstalled()) return nullptr;
  const mate::cuda::Driver* d = Driver();
  int capturing = 0;
  if (stream != nullptr && d->cuStreamIsCapturing(static_cast<mate::cuda::CUstream>(stream), &capturing) == 0 &&
      capturing == mate::cuda::kCaptureStatusActive) {
    dprintf(2, "[mate-guard] allocation during graph capture refused: %s\n", kGraphCaptureRefused);
    return nullptr;
  }
  mate::cuda::CUdeviceptr p = 0;
  int r = Allocate(device, static_cast<size_t>(size < 0 ? 0 : size), static_cast<mate::cuda::CUstream>(stream), &p);
  // PyTorch takes a null pointer for memory: a failure is raised in it
  // (torch.OutOfMemoryError for out of memory, else a RuntimeError).
  if (r == mate::cuda::kErrorOutOfMemory) ThrowTorchOutOfMemory(LastError());
  if (r != 0) {
    std::string text = "mate-guard: device allocation of " + std::to_string(size) + " bytes failed: " + LastError();
    ThrowTorchError(text.c_str());
  }
  return reinterpret_cast<void*>(p);
}

MATE_EXPORT void mate_guard_torch_free(void* ptr, ssize_t /*size*/, int /*device*/, void* stream) {
  Free(reinterpret_cast<mate::cuda::CUdeviceptr>(ptr), static_cast<mate::cuda::CUstream>(stream), false);
}

// Tensor.record_stream(stream), patched by the Python hook: `ptr` may be a
// view's data pointer, inside the allocation.
MATE_EXPORT int mate_guard_torch_record_stream(void* ptr, void* stream) {
  return RecordStream(reinterpret_cast<mate::cuda::CUdeviceptr>(ptr), static_cast<mate::cuda::CUstream>(stream));
}

// The graph-capture refusal message, for the Python hook.
MATE_EXPORT const char* mate_guard_graph_capture_message() { return kGraphCaptureRefused; }

// CUDA IPC of a guarded tensor (the Python hook's own share and rebuild:
// PyTorch's pluggable allocators have none). The range (ExportedRange) and
// the mapping (SharedMapping) are the Python hook's ctypes structures.
namespace {
thread_local std::string t_ipc_error;
}  // namespace

// 0: `out->fd` is the allocation's chunk (the caller closes it); else
// mate_guard_ipc_error() says why.
MATE_EXPORT int mate_guard_ipc_export(void* ptr, ExportedRange* out) {
  std::string why;
  if (!EnsureInstalled() || !Export(reinterpret_cast<mate::cuda::CUdeviceptr>(ptr), out, &why)) {
    t_ipc_error = why.empty() ? LastError() : why;
    return 1;
  }
  return 0;
}

// Maps a range another process exported, for `device`; works whether or
// not this process guards its own memory.
MATE_EXPORT int mate_guard_ipc_map(int device, const ExportedRange* range, SharedMapping* out) {
  const char* no_driver = nullptr;
  const mate::cuda::Driver* drv = mate::cuda::Load(&no_driver);
  if (drv == nullptr) {
    t_ipc_error = no_driver ? no_driver : "no CUDA driver";
    return 1;
  }
  std::string why;
  if (!MapShared(drv, device, static_cast<int>(range->fd), range->chunk_bytes, range->granule, range->guard_before != 0,
                 out, &why)) {
    t_ipc_error = why;
    return 1;
  }
  return 0;
}

MATE_EXPORT void mate_guard_ipc_unmap(const SharedMapping* m) {
  const char* no_driver = nullptr;
  const mate::cuda::Driver* drv = mate::cuda::Load(&no_driver);
  if (drv != nullptr) UnmapShared(drv, *m);
}

MATE_EXPORT const char* mate_guard_ipc_error() { return t_ipc_error.c_str(); }
