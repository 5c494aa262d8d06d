// The host guard's C ABI (include/mate_guard_host.h) in
// libmate_guard_cuda.so, the one library the Python package loads:
// install from the run's handoff, guarded blocks, canary checks, the
// counters, the running test, the native heap of chosen modules and
// numpy's allocation handler.
#include <string.h>

#include <string>
#include <vector>

#include "crash/fault_continuation.h"
#include "crash/signal_handler.h"
#include "host/host_guard.h"
#include "host/numpy_handler.h"
#include "device/driver/cuda_driver.h"

#define MATE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
thread_local std::string t_error;
thread_local std::string t_json;
}  // namespace

// 0 when the host guard is on (again: nothing to do); else
// mate_guard_host_error() says why. `handoff`: MATE_GUARD_SETTINGS's JSON;
// `report_fd`: where reports are printed, -1 for stderr (pytest gives a
// copy of the terminal's stderr: it captures fd 2 while a test runs).
MATE_EXPORT int mate_guard_host_install(const char* handoff, int report_fd) {
  mate::host::InstallPaths paths;
  paths.report_fd = report_fd;
  if (!mate::host::Install(handoff, paths, &t_error)) return 1;
  return 0;
}

MATE_EXPORT const char* mate_guard_host_error() { return t_error.c_str(); }

MATE_EXPORT int mate_guard_host_active() { return mate::host::Active() ? 1 : 0; }

// A guarded block of `size` bytes (null when none could be had: the
// caller allocates elsewhere), and its free (0: not the guard's pointer).
MATE_EXPORT void* mate_guard_host_malloc(size_t size) { return mate::host::Allocate(size, false); }
MATE_EXPORT int mate_guard_host_free(void* ptr) { return mate::host::Free(ptr) ? 1 : 0; }

// Guards the native heap of the modules matching any of the
// newline-separated globs, loaded now or later. 0, or 1 with the error.
MATE_EXPORT int mate_guard_host_guard_native(const char* globs) {
  std::vector<std::string> list;
  std::string g;
  for (const char* p = globs ? globs : "";; p++) {
    if (*p == '\n' || *p == '\0') {
      if (!g.empty()) list.push_back(g);
      g.clear();
      if (*p == '\0') break;
    } else {
      g.push_back(*p);
    }
  }
  if (!mate::host::GuardNative(list, &t_error)) return 1;
  return 0;
}

// The running test for every report (host and device); "" or null: none.
MATE_EXPORT void mate_guard_host_set_current_test(const char* name) { mate::host::SetCurrentTest(name); }

// A line printed after the report of a fault on guarded memory, before the
// process dies ("" for none): what the host wants its user told then.
MATE_EXPORT void mate_guard_host_set_fault_note(const char* line) { mate::SetFaultNote(line); }

// The crash handler in front again, where another was installed since
// (pytest's faulthandler plugin, enabled after the guard: a guard fault while
// pytest collects would reach it first, and come back to us as a signal it raised).
MATE_EXPORT void mate_guard_host_keep_fault_handler_first() { mate::KeepFaultHandlerFirst(); }

// After the report (and note) of a fault on guarded memory, the program
// `argv[0]` with `argv` and `envp` (null-terminated) replaces the dying
// process, descriptors 0-2 put back to `fd0`-`fd2` first (-1: as they are):
// the pytest plugin's continuation. A null or empty `argv` turns it off.
MATE_EXPORT void mate_guard_host_set_fault_continuation(const char* const* argv, const char* const* envp, int fd0,
                                                        int fd1, int fd2) {
  std::vector<std::string> args, env;
  for (const char* const* p = argv; p != nullptr && *p != nullptr; p++) args.emplace_back(*p);
  for (const char* const* p = envp; p != nullptr && *p != nullptr; p++) env.emplace_back(*p);
  const int fds[3] = {fd0, fd1, fd2};
  mate::SetFaultContinuation(args, env, fds);
}

// Canary checks (all live blocks with `all`, else those made since the
// last check) plus damage and bad frees found meanwhile: each filed in the
// report directory. Returns how many.
MATE_EXPORT int mate_guard_host_check(int all) { return static_cast<int>(mate::host::Check(all != 0)); }

// The counters as JSON; "" when off. Valid until the thread's next call.
MATE_EXPORT const char* mate_guard_host_stats_json() {
  t_json = mate::host::StatsJson();
  return t_json.c_str();
}

// numpy's handler: `previous` is the PyDataMem_Handler numpy has now
// (PyDataMem_GetHandler's capsule pointer). Returns the guard's handler,
// for a capsule named "mem_handler" given to PyDataMem_SetHandler.
MATE_EXPORT void* mate_guard_numpy_handler(const void* previous) {
  return mate::host::GuardNumpyHandler(static_cast<const mate::host::NumpyHandler*>(previous));
}

// numpy's default handler, counted (host/numpy_handler.h): `numpy_default`
// is the pointer of the capsule numpy's new contexts start with; the
// answer is what that capsule is to point at (PyCapsule_SetPointer), null
// when it points at one of the guard's already.
MATE_EXPORT void* mate_guard_numpy_counting_default(const void* numpy_default) {
  return mate::host::CountingDefaultHandler(static_cast<const mate::host::NumpyHandler*>(numpy_default));
}

// Why this machine has no CUDA driver to guard device memory with ("" when
// it has one): the Python package then guards host memory only, and says so.
MATE_EXPORT const char* mate_guard_cuda_missing() {
  const char* why = nullptr;
  return mate::cuda::Load(&why) != nullptr ? "" : (why && *why ? why : "no CUDA driver");
}
