#include "device/launch/launch_tracker_state.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/process_state.h"
#include "core/stack_store.h"
#include "device/driver/cupti.h"
#include "device/launch/driver_interpose.h"
#include "device/launch/input_dump.h"
#include "device/launch/kernel_params.h"
#include "device/launch/stream_clocks.h"

namespace mate {
namespace device {

using cuda::CUfunction;
using cuda::CUstream;
using tracker::BeforeLaunch;
using tracker::IsLaunch;
using tracker::Launch;
using tracker::Record;
using tracker::S;
using tracker::State;
using tracker::t_pending;

namespace {

thread_local int t_inside = 0;  // inside our callback (CUDA calls we make from it)

// Ordering calls, under the lock.
template <typename Fn>
void Clocks(Fn fn) {
  State& st = S();
  auto lock = Hold(st);
  fn(st.clocks);
}

template <typename T>
const T* P(const cupti::CallbackData* cb) {
  return static_cast<const T*>(cb->functionParams);
}

Launch LaunchOf(cupti::CallbackId id, const cupti::CallbackData* cb) {
  namespace dr = cupti::driver;
  Launch l;
  l.symbol = cb->symbolName;
  if (id == dr::kLaunchKernelEx || id == dr::kLaunchKernelExPtsz) {
    const auto* p = P<cupti::cuLaunchKernelEx_params>(cb);
    l.f = p->f;
    l.stream = p->config ? p->config->hStream : nullptr;
    l.params = p->kernelParams;
    l.extra = p->extra;
    l.ptsz = id == dr::kLaunchKernelExPtsz;
  } else {
    const auto* p = P<cupti::cuLaunchKernel_params>(cb);
    l.f = p->f;
    l.stream = p->hStream;
    l.params = p->kernelParams;
    const bool cooperative = id == dr::kLaunchCooperativeKernel || id == dr::kLaunchCooperativeKernelPtsz;
    l.extra = cooperative ? nullptr : p->extra;
    l.ptsz = id == dr::kLaunchKernelPtsz || id == dr::kLaunchCooperativeKernelPtsz;
  }
  return l;
}

// Ordering calls. The CUDA runtime's calls reach the driver's, which
// CUPTI reports as such (launches too): the driver domain sees everything.
void Ordering(cupti::CallbackId id, const cupti::CallbackData* cb) {
  namespace dr = cupti::driver;
  if (id == dr::kEventRecord || id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlags ||
      id == dr::kEventRecordWithFlagsPtsz) {
    const auto* p = P<cupti::EventStream_params>(cb);
    Clocks([&](StreamClocks& c) {
      c.EventRecorded(p->event, p->stream, id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlagsPtsz);
    });
  } else if (id == dr::kStreamWaitEvent || id == dr::kStreamWaitEventPtsz) {
    const auto* p = P<cupti::StreamEvent_params>(cb);
    Clocks([&](StreamClocks& c) { c.StreamWaited(p->stream, p->event, id == dr::kStreamWaitEventPtsz); });
  } else if (id == dr::kCtxSynchronize || id == dr::kCtxSynchronizeV2) {
    Clocks([](StreamClocks& c) { c.ContextDone(); });
  } else if (id == dr::kStreamSynchronize || id == dr::kStreamSynchronizePtsz || id == dr::kStreamQuery ||
             id == dr::kStreamQueryPtsz) {
    CUstream stream = P<cupti::Stream_params>(cb)->stream;
    Clocks(
        [&](StreamClocks& c) { c.StreamDone(stream, id == dr::kStreamSynchronizePtsz || id == dr::kStreamQueryPtsz); });
  } else if (id == dr::kEventSynchronize || id == dr::kEventQuery) {
    cuda::CUevent ev = P<cupti::Event_params>(cb)->event;
    Clocks([&](StreamClocks& c) { c.EventDone(ev); });
  } else if (id == dr::kEventDestroy || id == dr::kEventDestroyV2) {
    cuda::CUevent ev = P<cupti::Event_params>(cb)->event;
    Clocks([&](StreamClocks& c) { c.EventDestroyed(ev); });
  } else if (id == dr::kStreamCreate || id == dr::kStreamCreateWithPriority) {
    const auto* p = P<cupti::StreamCreate_params>(cb);
    if (p->stream) Clocks([&](StreamClocks& c) { c.StreamCreated(*p->stream, p->flags); });
  }
}

// MATE_GUARD_CUPTI_EMPTY (tuning, bench/cuda): calls seen but nothing
// tracked, so a run measures what CUPTI's callback mechanism costs by
// itself (with the counters on, launch calls still counted and timed).
bool g_empty_callbacks = false;
thread_local uint64_t t_entered = 0;
// MATE_GUARD_TRACK_SKIP=record (tuning, bench/cuda): launches seen but
// not recorded (ordering calls still are), to split the tracker's cost.
bool g_skip_record = false;
// MATE_GUARD_TRACK_ALTERNATE_MS=<ms>[,all] (tuning, bench/cuda): launches
// recorded in the even periods of the monotonic clock, seen but not
// recorded in the odd ones (as TRACK_SKIP=record: ordering calls still
// tracked), so one run times its steps both ways side by side
// (ddp_train.py sorts its steps by the same clock). With ",all" every call
// in an odd period is dropped at once, as under CUPTI_EMPTY (under
// TRACK_VIA=imports: tracking as good as off); ordering calls then go
// unseen, so from the first such period on every use counts as ordered
// (the stream rule can miss, never invent, a cross-stream free).
uint64_t g_alternate_ns = 0;
bool g_alternate_all = false;
bool g_ordering_dropped = false;  // atomic: an ordering call was dropped (Ordered)

bool OddPeriod() { return g_alternate_ns != 0 && (NowNs() / g_alternate_ns) % 2 == 1; }

bool RecordNow() { return !g_skip_record && !OddPeriod(); }

// A call dropped in an odd period (",all"). An ordering call leaves the
// stream clocks behind, except a stream's creation (its flags are asked of
// the driver when it is first seen) and an event's destruction (its stale
// clock only ever errs toward ordered).
bool DroppedNow(cupti::CallbackId id, bool launch) {
  if (!g_alternate_all || !OddPeriod()) return false;
  namespace dr = cupti::driver;
  const bool harmless = launch || id == dr::kStreamCreate || id == dr::kStreamCreateWithPriority ||
                        id == dr::kEventDestroy || id == dr::kEventDestroyV2;
  if (!harmless && !__atomic_load_n(&g_ordering_dropped, __ATOMIC_RELAXED))
    __atomic_store_n(&g_ordering_dropped, true, __ATOMIC_RELEASE);
  return true;
}

// MATE_GUARD_TRACK_ALTERNATE_MS into the period and the ",all" flag (0:
// unset). Never silent: launches go unrecorded, a report names fewer.
uint64_t AlternateNs(bool* all) {
  const char* raw = getenv("MATE_GUARD_TRACK_ALTERNATE_MS");
  *all = false;
  if (raw == nullptr) return 0;
  char* end = nullptr;
  unsigned long long v = strtoull(raw, &end, 10);
  *all = strcmp(end, ",all") == 0;
  if (*raw < '0' || *raw > '9' || (*end != '\0' && !*all) || v == 0 || v > 3600000) {
    dprintf(2,
            "[mate-guard] warning: MATE_GUARD_TRACK_ALTERNATE_MS=%s is not a whole number of milliseconds from 1 to "
            "3600000 (optionally followed by \",all\"); ignored\n",
            raw);
    *all = false;
    return 0;
  }
  dprintf(2,
          "[mate-guard] warning: MATE_GUARD_TRACK_ALTERNATE_MS=%s (a bench setting): %s in every other %llu ms only\n",
          raw,
          *all ? "driver calls are tracked (cross-stream frees checked until an ordering call is dropped)"
               : "launches are recorded",
          v);
  return v * 1000000ull;
}

void Count(uint64_t* counter) {
  if (TimeCounters()) __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void Callback(void*, cupti::Domain domain, cupti::CallbackId id, const void* data) {
  if (domain != cupti::kDomainDriver) return;
  tracker::DriverEvent(id, static_cast<const cupti::CallbackData*>(data));
}

const cupti::CallbackId kDriverIds[] = {
    cupti::driver::kCtxSynchronize,
    cupti::driver::kCtxSynchronizeV2,
    cupti::driver::kEventRecord,
    cupti::driver::kEventQuery,
    cupti::driver::kEventSynchronize,
    cupti::driver::kEventDestroy,
    cupti::driver::kEventDestroyV2,
    cupti::driver::kStreamCreate,
    cupti::driver::kStreamCreateWithPriority,
    cupti::driver::kStreamQuery,
    cupti::driver::kStreamQueryPtsz,
    cupti::driver::kStreamSynchronize,
    cupti::driver::kStreamSynchronizePtsz,
    cupti::driver::kStreamWaitEvent,
    cupti::driver::kStreamWaitEventPtsz,
    cupti::driver::kEventRecordPtsz,
    cupti::driver::kEventRecordWithFlags,
    cupti::driver::kEventRecordWithFlagsPtsz,
    cupti::driver::kLaunchKernel,
    cupti::driver::kLaunchKernelPtsz,
    cupti::driver::kLaunchKernelEx,
    cupti::driver::kLaunchKernelExPtsz,
    cupti::driver::kLaunchCooperativeKernel,
    cupti::driver::kLaunchCooperativeKernelPtsz,
};

// CUPTI's subscription to the calls above, under the tracker's lock.
// False, with `why`, where CUPTI cannot run.
bool Subscribe(const char* skip, std::string* why) {
  State& st = S();
  const char* load_why = nullptr;
  st.api = cupti::Load(&load_why);
  if (st.api == nullptr) {
    *why = load_why;
    return false;
  }
  int r = st.api->cuptiSubscribe(&st.sub, &Callback, nullptr);
  if (r != cupti::kSuccess) {
    const char* text = nullptr;
    if (st.api->cuptiGetResultString) st.api->cuptiGetResultString(r, &text);
    *why = std::string("CUPTI refused the subscription (") + (text ? text : "error " + std::to_string(r)) +
           "): another CUPTI client, such as a profiler, is attached";
    st.api = nullptr;
    return false;
  }
  // MATE_GUARD_TRACK_SKIP=ordering (tuning, bench/cuda): only the launch
  // calls subscribed, to measure what the ordering calls' callbacks cost.
  const bool skip_ordering = skip && strstr(skip, "ordering");
  for (cupti::CallbackId id : kDriverIds)
    if (!skip_ordering || IsLaunch(id)) st.api->cuptiEnableCallback(1, st.sub, cupti::kDomainDriver, id);
  // Without cuFuncGetParamInfo (a driver older than CUDA 12.4) kernels
  // are named but their parameters not read (counted: no_layout).
  return true;
}
}  // namespace

// A driver call the program made, at its entry and at its exit: from
// CUPTI's callback, or from the import front-end's wrappers
// (driver_interpose.h), which describe their calls as CUPTI does.
void tracker::DriverEvent(cupti::CallbackId id, const cupti::CallbackData* cb) {
  if (InInternalCalls() || t_inside) {
    if (cb->callbackSite == cupti::kExit) Count(&S().own_callbacks);
    return;
  }
  const bool launch = IsLaunch(id);
  if (cb->callbackSite == cupti::kExit) Count(launch ? &S().launch_callbacks : &S().ordering_callbacks);
  if (cb->callbackSite != cupti::kExit) {
    if (launch && DumpingInputs() && !g_empty_callbacks) {
      t_inside++;
      BeforeLaunch(LaunchOf(id, cb));
      t_inside--;
    }
    // Each launch call timed, entry to exit (TrackerStats::call_ns); the
    // thread-local is not touched where the counters are off.
    if (launch && TimeCounters()) t_entered = NowNs();
    return;
  }
  if (launch && TimeCounters() && t_entered != 0) {
    __atomic_fetch_add(&S().call_ns, NowNs() - t_entered, __ATOMIC_RELAXED);
    t_entered = 0;
  }
  // MATE_GUARD_CUPTI_EMPTY (or an odd period of ALTERNATE_MS=<ms>,all):
  // counted and timed (with the counters on), nothing tracked.
  if (g_empty_callbacks || DroppedNow(id, launch)) {
    if (launch) t_pending.number = 0;  // a number dumpInputs took at its entry goes unused
    return;
  }
  int result = cb->functionReturnValue ? *static_cast<const int*>(cb->functionReturnValue) : 0;
  t_inside++;
  if (launch) {
    if (result == 0 && RecordNow()) Record(LaunchOf(id, cb));
    t_pending.number = 0;  // taken (a failed launch leaves its number unused)
  } else if (result == 0) {
    Ordering(id, cb);
  }
  // The program just saw a kernel's fault (at a synchronize, a copy, a launch).
  if (cuda::IsSticky(result)) S().hooks.OnStickyError(result, cb->functionName ? cb->functionName : "a CUDA call", 0);
  t_inside--;
}

bool StartTracking(const cuda::Driver* drv, const Options& options, const TrackerHooks& hooks, std::string* why) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.on) return true;
  st.hooks = hooks;
  st.drv = drv;
  st.clocks.SetDriver(drv);
  st.blocking = options.launch_blocking;
  g_empty_callbacks = getenv("MATE_GUARD_CUPTI_EMPTY") != nullptr;
  const char* skip = getenv("MATE_GUARD_TRACK_SKIP");
  g_skip_record = skip && strstr(skip, "record");
  g_alternate_ns = AlternateNs(&g_alternate_all);
  tracker::SkipParts(skip && strstr(skip, "site"), skip && strstr(skip, "args"));
  ConfigureDump(&options);
  // CUPTI first; where it cannot run (not installed, or a profiler holds
  // it) the driver's functions are handed to the program wrapped
  // (driver_interpose.h). MATE_GUARD_TRACK_VIA=imports (tuning,
  // bench/cuda): the wrappers first.
  const char* via = getenv("MATE_GUARD_TRACK_VIA");
  const bool imports_first = via != nullptr && strcmp(via, "imports") == 0;
  // On, through the import front-end or CUPTI; `via_why`: why not the other.
  auto started = [&st](bool interposed, std::string via_why) {
    st.interposed = interposed;
    st.via_why = std::move(via_why);
    st.off = "";
    __atomic_store_n(&st.on, true, __ATOMIC_RELEASE);
    return true;
  };
  std::string cupti_why;
  if (!imports_first && Subscribe(skip, &cupti_why)) return started(false, "");
  std::string imports_why;
  if (StartInterposing(drv, &imports_why)) return started(true, cupti_why);
  if (imports_first && Subscribe(skip, &cupti_why))
    return started(false, "the driver's functions could not be wrapped: " + imports_why);
  st.off = cupti_why + "; nor could launches be seen without it (" + imports_why + ")";
  *why = st.off;
  return false;
}

void TrackingNotWanted() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!st.on) st.off = "";
}

bool TrackingOn() { return __atomic_load_n(&S().on, __ATOMIC_ACQUIRE); }

const char* TrackingOff() { return S().off.c_str(); }

bool LaunchBlocking() { return S().on && S().blocking; }

void StopTracking() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  // Unsubscribed before the driver's teardown; what was tracked stays for
  // the reports still to come.
  if (!st.on || st.stopped) return;
  if (st.interposed) SetInterposing(false);
  else st.api->cuptiUnsubscribe(st.sub);
  st.stopped = true;
}

std::string TrackingVia() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!st.interposed) return st.via_why.empty() ? "cupti" : "cupti (" + st.via_why + ")";
  InterposeStats i = GetInterposeStats();
  return "imports (modules " + std::to_string(i.modules) + ", wrappers handed " + std::to_string(i.handed) + ", gaps " +
         std::to_string(i.gaps) + (i.gap_names.empty() ? "" : ": " + i.gap_names) + ")" +
         (st.via_why.empty() ? "" : " (not CUPTI: " + st.via_why + ")");
}

void SetSiteProvider(SiteProvider provider) { __atomic_store_n(&S().site, provider, __ATOMIC_RELEASE); }

bool Ordered(CUstream stream, const StreamUse& use) {
  State& st = S();
  auto lock = Hold(st);
  return !st.on || (st.interposed && OrderingUnseen()) || __atomic_load_n(&g_ordering_dropped, __ATOMIC_ACQUIRE) ||
         st.clocks.Ordered(stream, use);
}

CUstream StreamHandle(uint16_t index) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.clocks.Handle(index);
}

}  // namespace device
}  // namespace mate
