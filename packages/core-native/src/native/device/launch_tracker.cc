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

namespace mate {
namespace device {

namespace {

using cuda::CUfunction;
using cuda::CUstream;

constexpr size_t kMaxStreams = 32;          // stream clocks kept exactly; more share the last index
constexpr uint16_t kLegacy = 0;             // the legacy default stream (null, 0x1)
constexpr uint16_t kPerThread = 1;          // the per-thread default stream (0x2)
constexpr uint16_t kOverflow = kMaxStreams - 1;
constexpr size_t kRing = 4096;              // launches remembered
constexpr size_t kArgsKept = kMaxDeviceLaunchArgs;
constexpr size_t kMaxParams = 512;

using Clock = std::array<uint64_t, kMaxStreams>;

void Join(Clock* into, const Clock& other) {
  for (size_t i = 0; i < kMaxStreams; i++) (*into)[i] = std::max((*into)[i], other[i]);
}

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct Param {
  uint32_t offset, size;
};

struct Kernel {
  uint32_t name = 0;            // StackStore id
  bool layout = false;          // parameter layout known
  std::vector<Param> params;
};

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
};

struct State {
  std::mutex mu;
  const cuda::Driver* drv = nullptr;
  const cupti::Api* api = nullptr;
  cupti::SubscriberHandle sub = nullptr;
  bool on = false;
  bool stopped = false;
  bool blocking = false;
  std::string off = "the device guard is not installed";
  SiteProvider site = nullptr;
  // Streams, their clocks, and what the host knows completed.
  CUstream handles[kMaxStreams] = {};
  bool blocking_stream[kMaxStreams] = {};
  uint16_t count = 2;  // the legacy and per-thread default streams are always there
  std::unordered_map<CUstream, uint16_t> index;
  Clock seq{};
  Clock clock[kMaxStreams] = {};
  Clock host{};
  Clock done{};  // launches known finished, the guard's own synchronizes included (for reports only)
  std::unordered_map<cuda::CUevent, Clock> events;
  // Kernels by function (a CUfunction or a CUkernel).
  std::unordered_map<const void*, Kernel> kernels;
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

// Under mu. `ptsz`: the call's null stream is the per-thread default stream.
uint16_t IndexOf(State& st, CUstream s, bool ptsz) {
  if (s == nullptr) return ptsz ? kPerThread : kLegacy;
  if (reinterpret_cast<uintptr_t>(s) == cuda::kStreamLegacy) return kLegacy;
  if (reinterpret_cast<uintptr_t>(s) == cuda::kStreamPerThread) return kPerThread;
  auto it = st.index.find(s);
  if (it != st.index.end()) return it->second;
  uint16_t i = st.count < kOverflow ? st.count++ : kOverflow;
  if (i != kOverflow) {
    // A stream we did not see created (made before tracking started): ask.
    unsigned flags = cuda::kStreamNonBlocking;
    st.drv->cuStreamGetFlags(s, &flags);
    st.blocking_stream[i] = (flags & cuda::kStreamNonBlocking) == 0;
    st.handles[i] = s;
  }
  st.index.emplace(s, i);
  return i;
}

// What work queued on stream `i` now is ordered after: its own clock, plus
// the legacy default stream's implicit synchronization with blocking streams.
Clock Effective(const State& st, uint16_t i) {
  Clock c = st.clock[i];
  c[i] = std::max(c[i], st.seq[i]);
  if (i == kLegacy) {
    for (uint16_t b = 1; b < st.count; b++) {
      if (!st.blocking_stream[b]) continue;
      Join(&c, st.clock[b]);
      c[b] = std::max(c[b], st.seq[b]);
    }
  } else if (st.blocking_stream[i]) {
    Join(&c, st.clock[kLegacy]);
    c[kLegacy] = std::max(c[kLegacy], st.seq[kLegacy]);
  }
  return c;
}

void HostKnowsAll(State& st) {
  for (size_t i = 0; i < kMaxStreams; i++) st.host[i] = std::max(st.host[i], st.seq[i]);
}


// Under mu: the kernel's name and parameter layout, found once per function.
const Kernel& KernelOf(State& st, const void* key, CUfunction f, const char* symbol) {
  auto it = st.kernels.find(key);
  if (it != st.kernels.end()) return it->second;
  Kernel k;
  const char* name = symbol;
  if ((name == nullptr || *name == '\0') && f != nullptr && st.drv->cuFuncGetName) st.drv->cuFuncGetName(&name, f);
  if (name == nullptr || *name == '\0') name = "(unnamed kernel)";
  k.name = StackStore::Get().Intern(name, strlen(name));
  // A CUfunction, or a CUkernel (the CUDA runtime's launches): whichever
  // query answers for the first parameter reads them all.
  using Query = cuda::CUresult (*)(CUfunction, size_t, size_t*, size_t*);
  CUfunction from_kernel = nullptr;
  if (f != nullptr && st.drv->cuKernelGetFunction && st.drv->cuKernelGetFunction(&from_kernel, f) != cuda::kSuccess)
    from_kernel = nullptr;
  const std::pair<Query, CUfunction> queries[] = {
      {st.drv->cuFuncGetParamInfo, f}, {st.drv->cuKernelGetParamInfo, f}, {st.drv->cuFuncGetParamInfo, from_kernel}};
  for (const auto& [query, handle] : queries) {
    size_t off = 0, size = 0;
    if (query == nullptr || handle == nullptr || query(handle, 0, &off, &size) != cuda::kSuccess) continue;
    for (size_t i = 0; i < kMaxParams && query(handle, i, &off, &size) == cuda::kSuccess; i++)
      k.params.push_back(Param{static_cast<uint32_t>(off), static_cast<uint32_t>(size)});
    break;
  }
  // No answer: a kernel without parameters, or a handle neither query knows.
  k.layout = !k.params.empty();
  return st.kernels.emplace(key, std::move(k)).first->second;
}

// The packed parameter buffer of a launch given through `extra`.
const uint8_t* ExtraBuffer(void** extra) {
  for (size_t i = 0; extra && extra[i] != nullptr && i < 16; i += 2) {
    if (extra[i] == reinterpret_cast<void*>(1)) return static_cast<const uint8_t*>(extra[i + 1]);  // CU_LAUNCH_PARAM_BUFFER_POINTER
  }
  return nullptr;
}

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
  SiteProvider site = __atomic_load_n(&st.site, __ATOMIC_ACQUIRE);
  uint32_t site_id = site ? site() : 0;
  std::vector<Param> params;
  bool layout;
  StreamUse use;
  CUstream stream;
  uint64_t number;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const Kernel& k = KernelOf(st, l.f, l.f, l.symbol);
    layout = k.layout;
    params = k.params;
    uint16_t i = IndexOf(st, l.stream, l.ptsz);
    // The launch runs after everything its stream is ordered after.
    st.clock[i] = Effective(st, i);
    st.seq[i]++;
    st.clock[i][i] = st.seq[i];
    number = ++st.launches;
    Entry& e = st.ring[number % kRing];
    e = Entry{};
    e.number = number;
    e.kernel = k.name;
    e.stream = l.stream;
    e.stream_index = i;
    e.seq = st.seq[i];
    e.site = site_id;
    e.test = CurrentTestId();
    use = StreamUse{i, st.seq[i], number};
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
        if (e.number == number) e.faulted = true;
      }
      OnStickyError(r, "the synchronize after the launch (launch blocking)", number);
    } else if (r == cuda::kSuccess) {
      std::lock_guard<std::mutex> lock(st.mu);
      st.done[use.stream] = std::max(st.done[use.stream], use.seq);
    }
  }
}

void OnEventRecord(cuda::CUevent ev, CUstream s, bool ptsz) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  st.events[ev] = Effective(st, IndexOf(st, s, ptsz));
}

void OnStreamWait(CUstream s, cuda::CUevent ev, bool ptsz) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.events.find(ev);
  if (it == st.events.end()) return;  // recorded before tracking started
  Join(&st.clock[IndexOf(st, s, ptsz)], it->second);
}

void OnStreamDone(CUstream s, bool ptsz) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  Join(&st.host, Effective(st, IndexOf(st, s, ptsz)));
}

void OnEventDone(cuda::CUevent ev) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.events.find(ev);
  if (it != st.events.end()) Join(&st.host, it->second);
}

void OnContextDone() {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  HostKnowsAll(st);
}

void OnEventDestroy(cuda::CUevent ev) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  st.events.erase(ev);
}

void OnStreamCreated(CUstream s, unsigned flags) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  uint16_t i = IndexOf(st, s, false);
  if (i != kOverflow) st.blocking_stream[i] = (flags & cuda::kStreamNonBlocking) == 0;
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

void DriverLaunch(cupti::CallbackId id, const cupti::CallbackData* cb) {
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
  Record(l);
}

// Ordering calls. The CUDA runtime's calls reach the driver's, which
// CUPTI reports as such (launches too): the driver domain sees everything.
void Ordering(cupti::CallbackId id, const cupti::CallbackData* cb) {
  namespace dr = cupti::driver;
  if (id == dr::kEventRecord || id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlags ||
      id == dr::kEventRecordWithFlagsPtsz) {
    const auto* p = P<cupti::EventStream_params>(cb);
    OnEventRecord(p->event, p->stream, id == dr::kEventRecordPtsz || id == dr::kEventRecordWithFlagsPtsz);
  } else if (id == dr::kStreamWaitEvent || id == dr::kStreamWaitEventPtsz) {
    const auto* p = P<cupti::StreamEvent_params>(cb);
    OnStreamWait(p->stream, p->event, id == dr::kStreamWaitEventPtsz);
  } else if (id == dr::kCtxSynchronize || id == dr::kCtxSynchronizeV2) {
    OnContextDone();
  } else if (id == dr::kStreamSynchronize || id == dr::kStreamSynchronizePtsz || id == dr::kStreamQuery ||
             id == dr::kStreamQueryPtsz) {
    OnStreamDone(P<cupti::Stream_params>(cb)->stream, id == dr::kStreamSynchronizePtsz || id == dr::kStreamQueryPtsz);
  } else if (id == dr::kEventSynchronize || id == dr::kEventQuery) {
    OnEventDone(P<cupti::Event_params>(cb)->event);
  } else if (id == dr::kEventDestroy || id == dr::kEventDestroyV2) {
    OnEventDestroy(P<cupti::Event_params>(cb)->event);
  } else if (id == dr::kStreamCreate || id == dr::kStreamCreateWithPriority) {
    const auto* p = P<cupti::StreamCreate_params>(cb);
    if (p->stream) OnStreamCreated(*p->stream, p->flags);
  }
}

void Callback(void*, cupti::Domain domain, cupti::CallbackId id, const void* data) {
  if (t_internal || t_inside || domain != cupti::kDomainDriver) return;
  const auto* cb = static_cast<const cupti::CallbackData*>(data);
  if (cb->callbackSite != cupti::kExit) return;
  int result = cb->functionReturnValue ? *static_cast<const int*>(cb->functionReturnValue) : 0;
  t_inside++;
  if (IsLaunch(id)) {
    if (result == 0) DriverLaunch(id, cb);
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
  for (uint32_t i = 0; i < e.arg_count; i++) ResolveArg(e.args[i], &out->args[i]);
}

}  // namespace

InternalCalls::InternalCalls() { t_internal++; }
InternalCalls::~InternalCalls() { t_internal--; }

bool StartTracking(const cuda::Driver* drv, const TrackerOptions& options, std::string* why) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.on) return true;
  st.drv = drv;
  st.blocking = options.blocking;
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
  if (!st.on) return true;
  uint16_t f = IndexOf(st, stream, false);
  if (use.stream == f || use.stream == kOverflow || f == kOverflow) return true;  // same stream, or not told apart
  Clock c = Effective(st, f);
  Join(&c, st.host);
  return c[use.stream] >= use.seq;
}

CUstream StreamHandle(uint16_t index) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (index == kLegacy) return nullptr;
  if (index == kPerThread) return reinterpret_cast<CUstream>(cuda::kStreamPerThread);
  return index < kMaxStreams ? st.handles[index] : nullptr;
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
      bool pick = exact ? n == exact : std::max(st.host[e.stream_index], st.done[e.stream_index]) < e.seq;
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
