#include "device/launch_tracker.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/process_state.h"
#include "core/stack_store.h"
#include "device/cupti.h"
#include "device/device_guard.h"
#include "device/input_dump.h"
#include "device/kernel_params.h"
#include "device/stream_clocks.h"

namespace mate {
namespace device {

namespace {

using cuda::CUfunction;
using cuda::CUstream;

constexpr size_t kRing = 4096;  // launches remembered
constexpr size_t kArgsKept = kMaxDeviceLaunchArgs;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct Entry {
  uint64_t number = 0;
  uint32_t kernel = 0;
  CUstream stream = nullptr;
  uint16_t stream_index = 0;
  uint64_t seq = 0;
  uint32_t site = 0, test = 0;
  bool faulted = false;
  uint32_t arg_total = 0;
  uint32_t arg_count = 0;
  ArgRef args[kArgsKept];
  uint32_t input_count = 0;  // inputs saved before it (dumpInputs)
  DeviceLaunchInput inputs[kMaxDeviceLaunchInputs];
};

struct State {
  std::mutex mu;
  const cuda::Driver* drv = nullptr;
  const cupti::Api* api = nullptr;
  cupti::SubscriberHandle sub = nullptr;
  bool on = false;
  bool stopped = false;
  bool blocking = false;
  bool faulted_once = false;  // launch blocking: a launch's own synchronize failed already
  std::string off = "the device guard is not installed";
  SiteProvider site = nullptr;
  StreamClocks clocks;  // streams and what each is ordered after
  KernelTable kernels;
  std::unordered_map<uint32_t, bool> dump_match;  // kernel name id -> matches dumpInputs
  // The last launches.
  Entry ring[kRing];
  uint64_t launches = 0;
  TrackerStats stats;
};

State& S() {
  static State* s = new State();  // never destroyed: callbacks may come during exit
  return *s;
}

thread_local int t_internal = 0;        // inside the guard's own driver calls
thread_local int t_inside = 0;          // inside our callback (CUDA calls we make from it)

// A launch whose inputs were saved at its entry: its number, call site
// and saved inputs, taken by its exit on the same thread.
struct Pending {
  uint64_t number = 0;
  uint32_t site = 0;
  uint32_t input_count = 0;
  DeviceLaunchInput inputs[kMaxDeviceLaunchInputs];
};
thread_local Pending t_pending;

struct Launch {
  CUfunction f = nullptr;
  const char* symbol = nullptr;
  CUstream stream = nullptr;
  bool ptsz = false;
  void** params = nullptr;
  void** extra = nullptr;
};

void Record(const Launch& l) {
  State& st = S();
  uint64_t t0 = NowNs();
  // The call site first: a JS provider runs JS, outside our lock.
  // Numbered (and its call site taken) at its entry when its inputs were saved then.
  const Pending& pending = t_pending;
  SiteProvider site = __atomic_load_n(&st.site, __ATOMIC_ACQUIRE);
  uint32_t site_id = pending.number ? pending.site : site ? site() : 0;
  std::vector<KernelParam> params;
  bool layout;
  StreamUse use;
  CUstream stream;
  uint64_t number;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const Kernel& k = st.kernels.Of(st.drv, l.f, l.symbol);
    layout = k.layout;
    params = k.params;
    use = st.clocks.Launch(l.stream, l.ptsz);
    number = pending.number ? pending.number : ++st.launches;
    use.launch = number;
    Entry& e = st.ring[number % kRing];
    e = Entry{};
    e.number = number;
    e.kernel = k.name;
    e.stream = l.stream;
    e.stream_index = use.stream;
    e.seq = use.seq;
    e.site = site_id;
    e.test = CurrentTestId();
    if (pending.number) {
      e.input_count = pending.input_count;
      for (uint32_t i = 0; i < pending.input_count; i++) e.inputs[i] = pending.inputs[i];
    }
    stream = l.stream;
    st.stats.launches++;
    if (!layout) st.stats.no_layout++;
  }
  // Parameter words that point into guarded allocations: each a use of it on this stream.
  ArgRef found[kArgsKept];
  uint32_t kept = 0, total = 0;
  const uint8_t* packed = l.params ? nullptr : ExtraBuffer(l.extra);
  if (layout && (l.params || packed)) {
    for (size_t p = 0; p < params.size(); p++) {
      const uint8_t* base = l.params ? static_cast<const uint8_t*>(l.params[p]) : packed + params[p].offset;
      if (base == nullptr) continue;
      for (uint32_t off = 0; off + sizeof(uint64_t) <= params[p].size; off += sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, base + off, sizeof(v));
        if (!MaybeGuarded(v)) continue;
        ArgRef a;
        if (!NoteLaunchArg(v, use, &a)) continue;
        a.param = static_cast<uint16_t>(p);
        a.offset = static_cast<uint16_t>(off);
        a.param_size = params[p].size;
        total++;
        if (kept < kArgsKept) found[kept++] = a;
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(st.mu);
    Entry& e = st.ring[number % kRing];
    if (e.number == number) {
      e.arg_total = total;
      e.arg_count = kept;
      for (uint32_t i = 0; i < kept; i++) e.args[i] = found[i];
    }
    st.stats.guarded_args += total;
    st.stats.ns += NowNs() - t0;
  }
  if (st.blocking) {
    // Launch blocking: wait for this launch (our call: not the program's
    // ordering), so a fault is pinned on it.
    cuda::CUresult r;
    {
      InternalCalls internal;
      r = st.drv->cuStreamSynchronize(stream);
    }
    if (cuda::IsSticky(r)) {
      {
        std::lock_guard<std::mutex> lock(st.mu);
        Entry& e = st.ring[number % kRing];
        // The first launch whose own synchronize failed; later ones fail on the lost context.
        if (e.number == number && !st.faulted_once) e.faulted = st.faulted_once = true;
      }
      OnStickyError(r, "the synchronize after the launch (launch blocking)", number);
    } else if (r == cuda::kSuccess) {
      std::lock_guard<std::mutex> lock(st.mu);
      st.clocks.LaunchDone(use);
    }
  }
}

// Ordering calls, under the lock.
template <typename Fn>
void Clocks(Fn fn) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  fn(st.clocks);
}

template <typename T>
const T* P(const cupti::CallbackData* cb) {
  return static_cast<const T*>(cb->functionParams);
}

bool IsLaunch(cupti::CallbackId id) {
  namespace dr = cupti::driver;
  return id == dr::kLaunchKernel || id == dr::kLaunchKernelPtsz || id == dr::kLaunchKernelEx ||
         id == dr::kLaunchKernelExPtsz || id == dr::kLaunchCooperativeKernel;
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
    l.extra = id == dr::kLaunchCooperativeKernel ? nullptr : p->extra;
    l.ptsz = id == dr::kLaunchKernelPtsz;
  }
  return l;
}

// dumpInputs: at a matching launch's entry (nothing of it queued yet),
// number it and save the guarded allocations its parameters point into.
void BeforeLaunch(const Launch& l) {
  State& st = S();
  std::vector<KernelParam> params;
  bool layout;
  uint32_t name;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const Kernel& k = st.kernels.Of(st.drv, l.f, l.symbol);
    auto hit = st.dump_match.find(k.name);
    if (hit == st.dump_match.end()) hit = st.dump_match.emplace(k.name, DumpWanted(StackStore::Get().Lookup(k.name))).first;
    if (!hit->second) return;
    layout = k.layout;
    params = k.params;
    name = k.name;
  }
  SiteProvider site = __atomic_load_n(&st.site, __ATOMIC_ACQUIRE);
  Pending p;
  p.site = site ? site() : 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    p.number = ++st.launches;
  }
  std::vector<DumpInput> inputs;
  const uint8_t* packed = l.params ? nullptr : ExtraBuffer(l.extra);
  if (layout && (l.params || packed)) {
    for (size_t i = 0; i < params.size(); i++) {
      const uint8_t* base = l.params ? static_cast<const uint8_t*>(l.params[i]) : packed + params[i].offset;
      if (base == nullptr) continue;
      for (uint32_t off = 0; off + sizeof(uint64_t) <= params[i].size; off += sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, base + off, sizeof(v));
        ArgRef a;
        if (!MaybeGuarded(v) || !FindLaunchArg(v, &a) || a.freed) continue;
        bool seen = false;  // one file per allocation, however many parameters point into it
        for (const DumpInput& in : inputs) seen = seen || in.alloc_id == a.alloc_id;
        if (seen) continue;
        DumpInput in;
        in.param = static_cast<uint32_t>(i);
        in.offset = off;
        in.value = v;
        in.alloc_id = a.alloc_id;
        in.user = a.user;
        in.size = a.size;
        inputs.push_back(in);
      }
    }
  }
  DumpLaunch what;
  what.number = p.number;
  what.kernel = StackStore::Get().Lookup(name);
  what.site = StackStore::Get().Lookup(p.site);
  what.test = StackStore::Get().Lookup(CurrentTestId());
  // The copy is ordered after the launch's stream: a per-thread default stream launch names it so.
  what.stream = l.ptsz && l.stream == nullptr ? reinterpret_cast<CUstream>(2) : l.stream;  // CU_STREAM_PER_THREAD
  size_t saved;
  {
    InternalCalls internal;  // the copies' synchronize is ours, not the program's ordering
    saved = DumpInputs(st.drv, what, inputs, p.inputs, kMaxDeviceLaunchInputs);
  }
  p.input_count = static_cast<uint32_t>(saved < kMaxDeviceLaunchInputs ? saved : kMaxDeviceLaunchInputs);
  t_pending = p;
}

// Ordering calls. The CUDA runtime's calls reach the driver's, which
// CUPTI reports as such (launches too): the driver domain sees everything.
void Ordering(cupti::CallbackId id, const cupti::CallbackData* cb) {
  namespace dr = cupti::driver;
  if (id == dr::kEventRecord || id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlags ||
      id == dr::kEventRecordWithFlagsPtsz) {
    const auto* p = P<cupti::EventStream_params>(cb);
    Clocks([&](StreamClocks& c) { c.EventRecorded(p->event, p->stream, id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlagsPtsz); });
  } else if (id == dr::kStreamWaitEvent || id == dr::kStreamWaitEventPtsz) {
    const auto* p = P<cupti::StreamEvent_params>(cb);
    Clocks([&](StreamClocks& c) { c.StreamWaited(p->stream, p->event, id == dr::kStreamWaitEventPtsz); });
  } else if (id == dr::kCtxSynchronize || id == dr::kCtxSynchronizeV2) {
    Clocks([](StreamClocks& c) { c.ContextDone(); });
  } else if (id == dr::kStreamSynchronize || id == dr::kStreamSynchronizePtsz || id == dr::kStreamQuery ||
             id == dr::kStreamQueryPtsz) {
    CUstream stream = P<cupti::Stream_params>(cb)->stream;
    Clocks([&](StreamClocks& c) { c.StreamDone(stream, id == dr::kStreamSynchronizePtsz || id == dr::kStreamQueryPtsz); });
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

void Callback(void*, cupti::Domain domain, cupti::CallbackId id, const void* data) {
  if (t_internal || t_inside || domain != cupti::kDomainDriver) return;
  const auto* cb = static_cast<const cupti::CallbackData*>(data);
  if (cb->callbackSite != cupti::kExit) {
    if (IsLaunch(id) && DumpingInputs()) {
      t_inside++;
      BeforeLaunch(LaunchOf(id, cb));
      t_inside--;
    }
    return;
  }
  int result = cb->functionReturnValue ? *static_cast<const int*>(cb->functionReturnValue) : 0;
  t_inside++;
  if (IsLaunch(id)) {
    if (result == 0) Record(LaunchOf(id, cb));
    t_pending.number = 0;  // taken (a failed launch leaves its number unused)
  } else if (result == 0) {
    Ordering(id, cb);
  }
  // The program just saw a kernel's fault (at a synchronize, a copy, a launch).
  if (cuda::IsSticky(result)) OnStickyError(result, cb->functionName ? cb->functionName : "a CUDA call", 0);
  t_inside--;
}

const cupti::CallbackId kDriverIds[] = {
    cupti::driver::kCtxSynchronize, cupti::driver::kCtxSynchronizeV2, cupti::driver::kEventRecord,
    cupti::driver::kEventQuery, cupti::driver::kEventSynchronize, cupti::driver::kEventDestroy,
    cupti::driver::kEventDestroyV2, cupti::driver::kStreamCreate, cupti::driver::kStreamCreateWithPriority,
    cupti::driver::kStreamQuery, cupti::driver::kStreamQueryPtsz, cupti::driver::kStreamSynchronize,
    cupti::driver::kStreamSynchronizePtsz, cupti::driver::kStreamWaitEvent, cupti::driver::kStreamWaitEventPtsz,
    cupti::driver::kEventRecordPtsz, cupti::driver::kEventRecordWithFlags, cupti::driver::kEventRecordWithFlagsPtsz,
    cupti::driver::kLaunchKernel, cupti::driver::kLaunchKernelPtsz, cupti::driver::kLaunchKernelEx,
    cupti::driver::kLaunchKernelExPtsz, cupti::driver::kLaunchCooperativeKernel,
};
void ToLaunch(const Entry& e, DeviceLaunch* out) {
  *out = DeviceLaunch{};
  out->number = e.number;
  out->kernel = e.kernel;
  out->stream = reinterpret_cast<uintptr_t>(e.stream);
  out->site = e.site;
  out->test = e.test;
  out->faulted = e.faulted;
  out->arg_count = e.arg_total;
  out->input_count = e.input_count;
  for (uint32_t i = 0; i < e.input_count; i++) out->inputs[i] = e.inputs[i];
  for (uint32_t i = 0; i < e.arg_count; i++) ResolveArg(e.args[i], &out->args[i]);
}

}  // namespace

InternalCalls::InternalCalls() { t_internal++; }
InternalCalls::~InternalCalls() { t_internal--; }

bool StartTracking(const cuda::Driver* drv, const Options& options, std::string* why) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.on) return true;
  st.drv = drv;
  st.clocks.SetDriver(drv);
  st.blocking = options.launch_blocking;
  ConfigureDump(&options);
  const char* load_why = nullptr;
  st.api = cupti::Load(&load_why);
  if (st.api == nullptr) {
    st.off = load_why;
    *why = st.off;
    return false;
  }
  int r = st.api->cuptiSubscribe(&st.sub, &Callback, nullptr);
  if (r != cupti::kSuccess) {
    const char* text = nullptr;
    if (st.api->cuptiGetResultString) st.api->cuptiGetResultString(r, &text);
    st.off = std::string("CUPTI refused the subscription (") + (text ? text : "error " + std::to_string(r)) +
             "): another CUPTI client, such as a profiler, is attached";
    *why = st.off;
    return false;
  }
  for (cupti::CallbackId id : kDriverIds) st.api->cuptiEnableCallback(1, st.sub, cupti::kDomainDriver, id);
  // Without cuFuncGetParamInfo (a driver older than CUDA 12.4) kernels
  // are named but their parameters not read (counted: no_layout).
  st.off = "";
  __atomic_store_n(&st.on, true, __ATOMIC_RELEASE);
  return true;
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
  st.api->cuptiUnsubscribe(st.sub);
  st.stopped = true;
}

void SetSiteProvider(SiteProvider provider) { __atomic_store_n(&S().site, provider, __ATOMIC_RELEASE); }

bool Ordered(CUstream stream, const StreamUse& use) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  return !st.on || st.clocks.Ordered(stream, use);
}

CUstream StreamHandle(uint16_t index) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.clocks.Handle(index);
}

void LaunchesForReport(uint64_t exact, std::vector<DeviceLaunch>* out, uint64_t* total, size_t cap) {
  State& st = S();
  std::vector<Entry> picked;
  *total = 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    uint64_t oldest = st.launches > kRing ? st.launches - kRing + 1 : 1;
    for (uint64_t n = st.launches; n >= oldest && n > 0; n--) {
      const Entry& e = st.ring[n % kRing];
      if (e.number != n) continue;
      bool pick = exact ? n == exact : !st.clocks.Finished(e.stream_index, e.seq);
      if (!pick) continue;
      (*total)++;
      if (picked.size() < cap) picked.push_back(e);
    }
    // Launch blocking, the fault seen first elsewhere (the background
    // check): every other launch was waited for, so the one left faulted.
    if (!exact && st.blocking && picked.size() == 1) picked[0].faulted = true;
  }
  out->resize(picked.size());
  for (size_t i = 0; i < picked.size(); i++) ToLaunch(picked[i], &(*out)[i]);
}

bool FindLaunch(uint64_t number, DeviceLaunch* out) {
  State& st = S();
  Entry e;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (number == 0 || st.ring[number % kRing].number != number) return false;
    e = st.ring[number % kRing];
  }
  ToLaunch(e, out);
  return true;
}

TrackerStats GetTrackerStats() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.stats;
}

}  // namespace device
}  // namespace mate
