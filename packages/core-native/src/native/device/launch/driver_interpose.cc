#include "device/launch/driver_interpose.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "device/launch/launch_tracker_state.h"
#include "platform/dlsym_gate.h"
#include "platform/import_redirector.h"
#include "platform/load_watch.h"
#include "platform/redirected_modules.h"

namespace mate {
namespace device {

namespace {

using cuda::CUcontext;
using cuda::CUevent;
using cuda::CUfunction;
using cuda::CUresult;
using cuda::CUstream;
namespace dr = cupti::driver;

bool g_on = false;
uint64_t g_handed = 0, g_gaps = 0;
// An ordering call (event record, wait, synchronize...) handed out
// unwrapped: the program may order work the tracker never sees.
bool g_ordering_gap = false;
// The first gaps' names, for the tuning stats.
std::mutex g_gap_mu;
std::string g_gap_names;

// The functions handed out wrapped: the driver's exported name, the name
// cuGetProcAddress is asked by (the per-thread-stream variants are asked
// by the plain name and a flag), the CUPTI id the tracker knows the call
// by (0: cuGetProcAddress itself), the wrapper, and the real function.
struct Hook {
  const char* name;
  const char* asked;
  cupti::CallbackId id;
  void* wrapper;
  void* real = nullptr;
};

enum Index : int {
  kLaunch,
  kLaunchPtsz,
  kLaunchEx,
  kLaunchExPtsz,
  kLaunchCoop,
  kLaunchCoopPtsz,
  kRecord,
  kRecordPtsz,
  kRecordFlags,
  kRecordFlagsPtsz,
  kWait,
  kWaitPtsz,
  kCtxSync,
  kCtxSyncV2,
  kStreamSync,
  kStreamSyncPtsz,
  kStreamQuery,
  kStreamQueryPtsz,
  kEventSync,
  kEventQuery,
  kEventDestroy,
  kEventDestroyV2,
  kStreamCreate,
  kStreamCreatePrio,
  kGetProc,
  kGetProcV2,
  kHooks
};
Hook g_hooks[kHooks];

template <typename Fn>
Fn Real(int i) {
  return reinterpret_cast<Fn>(g_hooks[i].real);
}

// The call, described to the tracker as CUPTI describes it.
template <typename Call>
CUresult Around(int i, const void* params, Call call) {
  if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED)) return call();
  CUresult result = 0;
  cupti::CallbackData cb{};
  cb.functionName = g_hooks[i].name;
  cb.functionParams = params;
  cb.functionReturnValue = &result;
  const cupti::CallbackId id = g_hooks[i].id;
  if (tracker::IsLaunch(id)) {  // entry: inputs saved before a launch (dumpInputs), the call timed
    cb.callbackSite = cupti::kEnter;
    tracker::DriverEvent(id, &cb);
  }
  result = call();
  cb.callbackSite = cupti::kExit;
  tracker::DriverEvent(id, &cb);
  return result;
}

#define MATE_LAUNCH_WRAPPER(fn, index)                                                                    \
  CUresult fn(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
              unsigned shared, CUstream stream, void** params, void** extra) {                            \
    cupti::cuLaunchKernel_params p{f, gx, gy, gz, bx, by, bz, shared, stream, params, extra};             \
    return Around(index, &p, [&] {                                                                        \
      return Real<decltype(&fn)>(index)(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);        \
    });                                                                                                   \
  }
MATE_LAUNCH_WRAPPER(LaunchKernel, kLaunch)
MATE_LAUNCH_WRAPPER(LaunchKernelPtsz, kLaunchPtsz)
#undef MATE_LAUNCH_WRAPPER

#define MATE_COOPERATIVE_WRAPPER(fn, index)                                                                       \
  CUresult fn(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,         \
              unsigned shared, CUstream stream, void** params) {                                                  \
    cupti::cuLaunchKernel_params p{f, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr};                   \
    return Around(index, &p,                                                                                      \
                  [&] { return Real<decltype(&fn)>(index)(f, gx, gy, gz, bx, by, bz, shared, stream, params); }); \
  }
MATE_COOPERATIVE_WRAPPER(LaunchCooperative, kLaunchCoop)
MATE_COOPERATIVE_WRAPPER(LaunchCooperativePtsz, kLaunchCoopPtsz)
#undef MATE_COOPERATIVE_WRAPPER

#define MATE_LAUNCH_EX_WRAPPER(fn, index)                                                           \
  CUresult fn(const cupti::LaunchConfig* config, CUfunction f, void** params, void** extra) {       \
    cupti::cuLaunchKernelEx_params p{config, f, params, extra};                                     \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(config, f, params, extra); }); \
  }
MATE_LAUNCH_EX_WRAPPER(LaunchEx, kLaunchEx)
MATE_LAUNCH_EX_WRAPPER(LaunchExPtsz, kLaunchExPtsz)
#undef MATE_LAUNCH_EX_WRAPPER

#define MATE_RECORD_WRAPPER(fn, index)                                                   \
  CUresult fn(CUevent event, CUstream stream) {                                          \
    cupti::EventStream_params p{event, stream};                                          \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(event, stream); }); \
  }
MATE_RECORD_WRAPPER(Record, kRecord)
MATE_RECORD_WRAPPER(RecordPtsz, kRecordPtsz)
#undef MATE_RECORD_WRAPPER

#define MATE_RECORD_FLAGS_WRAPPER(fn, index)                                                    \
  CUresult fn(CUevent event, CUstream stream, unsigned flags) {                                 \
    cupti::EventStream_params p{event, stream};                                                 \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(event, stream, flags); }); \
  }
MATE_RECORD_FLAGS_WRAPPER(RecordFlags, kRecordFlags)
MATE_RECORD_FLAGS_WRAPPER(RecordFlagsPtsz, kRecordFlagsPtsz)
#undef MATE_RECORD_FLAGS_WRAPPER

#define MATE_WAIT_WRAPPER(fn, index)                                                            \
  CUresult fn(CUstream stream, CUevent event, unsigned flags) {                                 \
    cupti::StreamEvent_params p{stream, event};                                                 \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(stream, event, flags); }); \
  }
MATE_WAIT_WRAPPER(Wait, kWait)
MATE_WAIT_WRAPPER(WaitPtsz, kWaitPtsz)
#undef MATE_WAIT_WRAPPER

CUresult CtxSync() {
  return Around(kCtxSync, nullptr, [] { return Real<decltype(&CtxSync)>(kCtxSync)(); });
}
CUresult CtxSyncV2(CUcontext ctx) {
  return Around(kCtxSyncV2, nullptr, [&] { return Real<decltype(&CtxSyncV2)>(kCtxSyncV2)(ctx); });
}

#define MATE_STREAM_WRAPPER(fn, index)                                            \
  CUresult fn(CUstream stream) {                                                  \
    cupti::Stream_params p{stream};                                               \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(stream); }); \
  }
MATE_STREAM_WRAPPER(StreamSync, kStreamSync)
MATE_STREAM_WRAPPER(StreamSyncPtsz, kStreamSyncPtsz)
MATE_STREAM_WRAPPER(StreamQuery, kStreamQuery)
MATE_STREAM_WRAPPER(StreamQueryPtsz, kStreamQueryPtsz)
#undef MATE_STREAM_WRAPPER

#define MATE_EVENT_WRAPPER(fn, index)                                            \
  CUresult fn(CUevent event) {                                                   \
    cupti::Event_params p{event};                                                \
    return Around(index, &p, [&] { return Real<decltype(&fn)>(index)(event); }); \
  }
MATE_EVENT_WRAPPER(EventSync, kEventSync)
MATE_EVENT_WRAPPER(EventQuery, kEventQuery)
MATE_EVENT_WRAPPER(EventDestroy, kEventDestroy)
MATE_EVENT_WRAPPER(EventDestroyV2, kEventDestroyV2)
#undef MATE_EVENT_WRAPPER

CUresult StreamCreate(CUstream* stream, unsigned flags) {
  cupti::StreamCreate_params p{stream, flags};
  return Around(kStreamCreate, &p, [&] { return Real<decltype(&StreamCreate)>(kStreamCreate)(stream, flags); });
}
CUresult StreamCreatePrio(CUstream* stream, unsigned flags, int priority) {
  cupti::StreamCreate_params p{stream, flags};
  return Around(kStreamCreatePrio, &p,
                [&] { return Real<decltype(&StreamCreatePrio)>(kStreamCreatePrio)(stream, flags, priority); });
}

// Whatever the driver hands out passes here: a tracked function (or
// cuGetProcAddress) becomes its wrapper; anything else is returned as is.
void* Swap(const char* name, void* fn) {
  if (fn == nullptr) return fn;
  for (const Hook& h : g_hooks) {
    if (h.wrapper == fn) return fn;  // wrapped already (a driver whose own look-ups went through the gates)
    if (h.real == fn) {
      __atomic_fetch_add(&g_handed, 1, __ATOMIC_RELAXED);
      return h.wrapper;
    }
  }
  for (const Hook& h : g_hooks) {
    if (name != nullptr && (strcmp(name, h.name) == 0 || strcmp(name, h.asked) == 0)) {
      __atomic_fetch_add(&g_gaps, 1, __ATOMIC_RELAXED);
      if (!tracker::IsLaunch(h.id)) __atomic_store_n(&g_ordering_gap, true, __ATOMIC_RELEASE);
      std::lock_guard<std::mutex> lock(g_gap_mu);
      if (g_gap_names.size() < 200) g_gap_names += std::string(g_gap_names.empty() ? "" : " ") + name;
      break;
    }
  }
  return fn;
}

using GetProc = CUresult (*)(const char*, void**, int, uint64_t);
using GetProcV2 = CUresult (*)(const char*, void**, int, uint64_t, int*);

CUresult GetProcAddress(const char* symbol, void** fn, int version, uint64_t flags) {
  CUresult r = Real<GetProc>(kGetProc)(symbol, fn, version, flags);
  if (r == cuda::kSuccess && fn != nullptr) *fn = Swap(symbol, *fn);
  return r;
}
CUresult GetProcAddressV2(const char* symbol, void** fn, int version, uint64_t flags, int* status) {
  CUresult r = Real<GetProcV2>(kGetProcV2)(symbol, fn, version, flags, status);
  if (r == cuda::kSuccess && fn != nullptr) *fn = Swap(symbol, *fn);
  return r;
}

// The gates' hook: a "cu..." name looked up with dlsym or dlvsym.
void* OnDriverSymbol(void* handle, const char* name, const char* version) {
  void* fn = version != nullptr ? dlvsym(handle, name, version) : dlsym(handle, name);
  return Swap(name, fn);
}

// The driver as loaded (its path as the loader knows it): whatever its
// name, its calls to its own functions are not the program's.
std::string g_driver_path;

// libcuda and CUPTI implement the calls; NVIDIA's other libraries are
// patched (their copies of the runtime look the driver up).
bool NotOurs(const platform::LoadedObject& obj) {
  static const char* const kDriver[] = {"libcuda.", "libcupti", "libnvidia-", "libmate_guard"};
  if (obj.path == nullptr) return false;
  return platform::ModuleNamedLike(obj.path, kDriver) || g_driver_path == obj.path;
}

// Every module's dlsym and dlvsym imports go to the gates, and its direct
// imports of the tracked functions (a module linked with -lcuda) to their
// wrappers. Built once the real functions are known (StartInterposing).
platform::ImportRedirector& Redirector() {
  static platform::ImportRedirector* r = [] {
    static platform::ImportRedirect table[2 + kHooks];
    size_t n = 0;
    table[n++] = {"dlsym", platform::DlsymGate(), {reinterpret_cast<void*>(&dlsym)}, true};
    table[n++] = {"dlvsym", platform::DlvsymGate(), {reinterpret_cast<void*>(&dlvsym)}, true};
    for (const Hook& h : g_hooks)
      if (h.real != nullptr) table[n++] = {h.name, h.wrapper, {h.real}, true};
    platform::RedirectorConfig config{"launch tracking", table, n, platform::Choose::kEveryModule,
                                      platform::kNeverLoader | platform::kNeverRuntime};
    config.skip = &NotOurs;
    return new platform::ImportRedirector(config);
  }();
  return *r;  // never destroyed: look-ups may come during exit
}

void Refresh() { Redirector().Refresh(); }

// One tracked function: its wrapper and the driver's own (missing from an
// older driver: null, never matched).
template <typename Fn>
void Set(Index i, const char* name, const char* asked, cupti::CallbackId id, Fn wrapper) {
  g_hooks[i] = Hook{name, asked, id, reinterpret_cast<void*>(wrapper), dlsym(cuda::LibraryHandle(), name)};
}

}  // namespace

bool StartInterposing(const cuda::Driver* drv, std::string* why) {
  void* lib = cuda::LibraryHandle();
  if (lib == nullptr || platform::DlsymGate() == nullptr) {
    *why = "no dlsym gates for this machine";
    return false;
  }
  // A context made before: a CUDA runtime may have looked the driver up
  // already, and its calls would go unseen.
  int count = 0;
  if (drv->cuDevicePrimaryCtxGetState == nullptr || drv->cuDeviceGetCount(&count) != cuda::kSuccess) {
    *why = "the driver cannot say whether CUDA was used before";
    return false;
  }
  for (int i = 0; i < count; i++) {
    cuda::CUdevice dev = 0;
    unsigned flags = 0;
    int active = 0;
    if (drv->cuDeviceGet(&dev, i) == cuda::kSuccess &&
        drv->cuDevicePrimaryCtxGetState(dev, &flags, &active) == cuda::kSuccess && active) {
      *why = "a CUDA context existed before tracking started";
      return false;
    }
  }
  // Each wrapper finds its real function by its own index (Real<>(index)).
  Set(kLaunch, "cuLaunchKernel", "cuLaunchKernel", dr::kLaunchKernel, &LaunchKernel);
  Set(kLaunchPtsz, "cuLaunchKernel_ptsz", "cuLaunchKernel", dr::kLaunchKernelPtsz, &LaunchKernelPtsz);
  Set(kLaunchEx, "cuLaunchKernelEx", "cuLaunchKernelEx", dr::kLaunchKernelEx, &LaunchEx);
  Set(kLaunchExPtsz, "cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", dr::kLaunchKernelExPtsz, &LaunchExPtsz);
  Set(kLaunchCoop, "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", dr::kLaunchCooperativeKernel,
      &LaunchCooperative);
  Set(kLaunchCoopPtsz, "cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernel", dr::kLaunchCooperativeKernelPtsz,
      &LaunchCooperativePtsz);
  Set(kRecord, "cuEventRecord", "cuEventRecord", dr::kEventRecord, &Record);
  Set(kRecordPtsz, "cuEventRecord_ptsz", "cuEventRecord", dr::kEventRecordPtsz, &RecordPtsz);
  Set(kRecordFlags, "cuEventRecordWithFlags", "cuEventRecordWithFlags", dr::kEventRecordWithFlags, &RecordFlags);
  Set(kRecordFlagsPtsz, "cuEventRecordWithFlags_ptsz", "cuEventRecordWithFlags", dr::kEventRecordWithFlagsPtsz,
      &RecordFlagsPtsz);
  Set(kWait, "cuStreamWaitEvent", "cuStreamWaitEvent", dr::kStreamWaitEvent, &Wait);
  Set(kWaitPtsz, "cuStreamWaitEvent_ptsz", "cuStreamWaitEvent", dr::kStreamWaitEventPtsz, &WaitPtsz);
  Set(kCtxSync, "cuCtxSynchronize", "cuCtxSynchronize", dr::kCtxSynchronize, &CtxSync);
  Set(kCtxSyncV2, "cuCtxSynchronize_v2", "cuCtxSynchronize", dr::kCtxSynchronizeV2, &CtxSyncV2);
  Set(kStreamSync, "cuStreamSynchronize", "cuStreamSynchronize", dr::kStreamSynchronize, &StreamSync);
  Set(kStreamSyncPtsz, "cuStreamSynchronize_ptsz", "cuStreamSynchronize", dr::kStreamSynchronizePtsz, &StreamSyncPtsz);
  Set(kStreamQuery, "cuStreamQuery", "cuStreamQuery", dr::kStreamQuery, &StreamQuery);
  Set(kStreamQueryPtsz, "cuStreamQuery_ptsz", "cuStreamQuery", dr::kStreamQueryPtsz, &StreamQueryPtsz);
  Set(kEventSync, "cuEventSynchronize", "cuEventSynchronize", dr::kEventSynchronize, &EventSync);
  Set(kEventQuery, "cuEventQuery", "cuEventQuery", dr::kEventQuery, &EventQuery);
  Set(kEventDestroy, "cuEventDestroy", "cuEventDestroy", dr::kEventDestroy, &EventDestroy);
  Set(kEventDestroyV2, "cuEventDestroy_v2", "cuEventDestroy", dr::kEventDestroyV2, &EventDestroyV2);
  Set(kStreamCreate, "cuStreamCreate", "cuStreamCreate", dr::kStreamCreate, &StreamCreate);
  Set(kStreamCreatePrio, "cuStreamCreateWithPriority", "cuStreamCreateWithPriority", dr::kStreamCreateWithPriority,
      &StreamCreatePrio);
  Set(kGetProc, "cuGetProcAddress", "cuGetProcAddress", 0, &GetProcAddress);
  Set(kGetProcV2, "cuGetProcAddress_v2", "cuGetProcAddress", 0, &GetProcAddressV2);

  if (g_hooks[kGetProc].real == nullptr && g_hooks[kGetProcV2].real == nullptr) {
    *why = "the driver has no cuGetProcAddress";
    return false;
  }
  Dl_info info{};
  if (dladdr(g_hooks[kGetProcV2].real ? g_hooks[kGetProcV2].real : g_hooks[kGetProc].real, &info) &&
      info.dli_fname != nullptr)
    g_driver_path = info.dli_fname;
  platform::SetSymbolHook(&OnDriverSymbol);
  SetInterposing(true);
  Redirector().Start({}, false, reinterpret_cast<const void*>(&StartInterposing));
  platform::WatchLoads(&Refresh);
  return true;
}

bool OrderingUnseen() { return __atomic_load_n(&g_ordering_gap, __ATOMIC_ACQUIRE); }

void SetInterposing(bool on) { __atomic_store_n(&g_on, on, __ATOMIC_RELEASE); }

InterposeStats GetInterposeStats() {
  InterposeStats s;
  Redirector().Refresh();
  for (const auto& m : Redirector().Modules()) s.modules += m.slots > 0 ? 1 : 0;
  s.handed = __atomic_load_n(&g_handed, __ATOMIC_RELAXED);
  s.gaps = __atomic_load_n(&g_gaps, __ATOMIC_RELAXED);
  std::lock_guard<std::mutex> lock(g_gap_mu);
  s.gap_names = g_gap_names;
  return s;
}

}  // namespace device
}  // namespace mate
