#include "device/device_guard.h"

#include <stdlib.h>

#include <mutex>
#include <vector>

#include "device/allocator/guarded_span.h"

namespace mate {
namespace device {

namespace {

constexpr int kMaxDevices = 64;

constexpr size_t kReportLaunches = 16;

std::mutex g_mu;
const cuda::Driver* g_drv = nullptr;
DeviceConfig g_config;
bool g_installed = false;
DeviceAllocator* g_devices[kMaxDevices];  // written under g_mu, read without it
StackProvider g_stack = nullptr;
StackProvider g_free_stack = nullptr;
thread_local std::string t_last_error;
std::string g_install_error = "the CUDA device guard is not installed";

// Adds what launch tracking knows to the allocators' findings, then hands
// them to the embedder's sink.
class TrackingSink : public EventSink {
 public:
  EventSink* next = nullptr;
  void OnEvent(const DeviceEvent& found) override {
    DeviceEvent e = found;
    e.tracking = TrackingOn();
    e.tracking_off = e.tracking ? "" : TrackingOff();
    e.blocking = LaunchBlocking();
    if (e.tracking && IsKernelException(e.kind))
      LaunchesForReport(e.exact_launch, &e.launches, &e.launches_total, kReportLaunches);
    if (e.tracking && e.kind == ReportKind::kCrossStreamFree) e.has_use = FindLaunch(e.use_launch, &e.use);
    if (next != nullptr) next->OnEvent(e);
  }
};

TrackingSink g_sink;

DeviceAllocator* ForDevice(int ordinal, cuda::CUresult* err) {
  if (ordinal < 0) {
    cuda::CUcontext ctx = nullptr;
    cuda::CUdevice dev = 0;
    bool current = g_drv->cuCtxGetCurrent(&ctx) == cuda::kSuccess && ctx != nullptr;
    // The usual current context is a device's primary one, which its
    // allocator retains (the handle stays that device's): known without
    // cuCtxGetDevice, one driver call fewer on every allocation's path
    // (driver calls there may wait behind the background thread's mapping).
    for (int i = 0; current && i < kMaxDevices; i++) {
      DeviceAllocator* a = __atomic_load_n(&g_devices[i], __ATOMIC_ACQUIRE);
      if (a != nullptr && a->context() == ctx) return a;
    }
    ordinal = current && g_drv->cuCtxGetDevice(&dev) == cuda::kSuccess ? dev : 0;
  }
  if (ordinal >= kMaxDevices) {
    *err = cuda::kErrorInvalidValue;
    return nullptr;
  }
  DeviceAllocator* a = __atomic_load_n(&g_devices[ordinal], __ATOMIC_ACQUIRE);
  if (a != nullptr) return a;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_devices[ordinal] == nullptr) {
    std::string error;
    // What the allocator needs from launch tracking and from here.
    AllocatorHooks hooks;
    hooks.launch_blocking = &LaunchBlocking;
    hooks.ordered = &Ordered;
    hooks.stream_handle = &StreamHandle;
    hooks.set_last_error = &SetLastError;
    DeviceAllocator* made = DeviceAllocator::Create(g_drv, ordinal, g_config, &g_sink, hooks, &error);
    if (made == nullptr) {
      SetLastError(error.c_str());
      *err = cuda::kErrorNotSupported;
      return nullptr;
    }
    __atomic_store_n(&g_devices[ordinal], made, __ATOMIC_RELEASE);
    // A second device in the process: each device's ranges become
    // reachable from the other, as with plain memory (device_peers.cc).
    for (int i = 0; i < kMaxDevices; i++) {
      DeviceAllocator* other = g_devices[i];
      if (other == nullptr || other == made) continue;
      other->GrantPeer(ordinal);
      made->GrantPeer(i);
    }
  }
  return g_devices[ordinal];
}

// Calls fn on each device's allocator made so far, until it returns false.
template <typename Fn>
void ForEachDevice(Fn fn) {
  for (int i = 0; i < kMaxDevices; i++) {
    DeviceAllocator* a = __atomic_load_n(&g_devices[i], __ATOMIC_ACQUIRE);
    if (a != nullptr && !fn(a)) return;
  }
}

DeviceAllocator* OwnerOf(cuda::CUdeviceptr ptr) {
  DeviceAllocator* owner = nullptr;
  ForEachDevice([&](DeviceAllocator* a) { return !(a->Owns(ptr) && (owner = a)); });
  return owner;
}

}  // namespace

bool Install(const DeviceConfig& config, EventSink* sink, std::string* error) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_installed) return true;
  const char* why = nullptr;
  const cuda::Driver* drv = cuda::Load(&why);
  if (drv == nullptr) {
    g_install_error = why;
    *error = why;
    return false;
  }
  g_drv = drv;
  g_config = config;
  g_sink.next = sink;
  if (config.settings.track_launches) {
    std::string why;
    // What the tracker asks of the guard (this file).
    TrackerHooks hooks;
    hooks.note_launch_args = &NoteLaunchArgs;
    hooks.find_launch_arg = &FindLaunchArg;
    hooks.resolve_arg = &ResolveArg;
    hooks.on_sticky_error = &OnStickyError;
    StartTracking(drv, g_config.settings, hooks, &why);  // off: TrackingOff() says why
  } else {
    TrackingNotWanted();
  }
  // After cuInit, so this runs before the driver's own exit handlers.
  atexit(ShutdownAll);
  __atomic_store_n(&g_installed, true, __ATOMIC_RELEASE);
  return true;
}

bool Installed() { return __atomic_load_n(&g_installed, __ATOMIC_ACQUIRE); }
const cuda::Driver* Driver() { return g_drv; }
void SetStackProvider(StackProvider provider) { __atomic_store_n(&g_stack, provider, __ATOMIC_RELEASE); }
void SetFreeStackProvider(StackProvider provider) { __atomic_store_n(&g_free_stack, provider, __ATOMIC_RELEASE); }

cuda::CUresult Allocate(int ordinal, size_t size, cuda::CUstream stream, cuda::CUdeviceptr* out) {
  *out = 0;
  if (!Installed()) {
    SetLastError(g_install_error.c_str());
    return cuda::kErrorNotInitialized;
  }
  cuda::CUresult err = cuda::kSuccess;
  DeviceAllocator* a = ForDevice(ordinal, &err);
  if (a == nullptr) return err;
  StackProvider stack = __atomic_load_n(&g_stack, __ATOMIC_ACQUIRE);
  bool guarded = false;
  err = a->Allocate(size, stream, stack ? stack() : 0, out, &guarded);
  // An out-of-memory's text (with the guard's accounting) was set by the allocator.
  if (err != cuda::kSuccess && err != cuda::kErrorOutOfMemory) SetLastError(cuda::ErrorText(err));
  return err;
}

cuda::CUresult Free(cuda::CUdeviceptr ptr, cuda::CUstream stream, bool async) {
  if (ptr == 0) return cuda::kSuccess;
  DeviceAllocator* a = Installed() ? OwnerOf(ptr) : nullptr;
  if (a == nullptr) {
    if (g_drv == nullptr) return cuda::kErrorNotInitialized;
    return async ? g_drv->cuMemFreeAsync(ptr, stream) : g_drv->cuMemFree(ptr);
  }
  StackProvider stack = __atomic_load_n(&g_free_stack, __ATOMIC_ACQUIRE);
  switch (a->Free(ptr, stream, stack ? stack() : 0)) {
    case FreeStatus::kFreed:
    case FreeStatus::kNotGuarded:
      return cuda::kSuccess;
    default:
      SetLastError("the pointer is not a live guarded allocation (reported)");
      return cuda::kErrorInvalidValue;
  }
}

cuda::CUresult RecordStream(cuda::CUdeviceptr ptr, cuda::CUstream stream) {
  DeviceAllocator* a = Installed() ? OwnerOf(ptr) : nullptr;
  if (a == nullptr) return cuda::kSuccess;  // not ours: nothing to wait for
  return a->RecordStream(ptr, stream) ? cuda::kSuccess : cuda::kErrorInvalidValue;
}

bool Owns(cuda::CUdeviceptr ptr) { return Installed() && OwnerOf(ptr) != nullptr; }

bool Export(cuda::CUdeviceptr ptr, ExportedRange* out, std::string* why) {
  DeviceAllocator* a = Installed() ? OwnerOf(ptr) : nullptr;
  if (a == nullptr) {
    *why = "the pointer is not a guarded allocation";
    return false;
  }
  return a->Export(ptr, out, why);
}

bool MaybeGuarded(uint64_t value) { return InGuardedSpan(value); }

void NoteLaunchArgs(const uint64_t* values, uint32_t n, const StreamUse& use, ArgRef* out, bool* found) {
  if (n > kMaxLaunchWords) n = kMaxLaunchWords;  // a batch at most (the callers' arrays are that long)
  for (uint32_t i = 0; i < n; i++) found[i] = false;
  DeviceAllocator* owners[kMaxLaunchWords];
  for (uint32_t i = 0; i < n; i++) owners[i] = OwnerOf(values[i]);
  for (uint32_t i = 0; i < n; i++) {
    DeviceAllocator* a = owners[i];
    if (a == nullptr) continue;
    bool first = true;  // each allocator once, at its first word
    for (uint32_t j = 0; j < i && first; j++) first = owners[j] != a;
    if (first) a->NoteArgs(values, owners, n, use, out, found);
  }
}

bool FindLaunchArg(uint64_t value, ArgRef* out) {
  DeviceAllocator* a = OwnerOf(value);
  return a != nullptr && a->FindArg(value, out);
}

void ResolveArg(const ArgRef& ref, DeviceLaunchArg* out) {
  out->param = ref.param;
  out->offset = ref.offset;
  out->param_size = ref.param_size;
  out->value = ref.value;
  out->freed = ref.freed != 0;
  DeviceAllocator* a = ref.device < kMaxDevices ? __atomic_load_n(&g_devices[ref.device], __ATOMIC_ACQUIRE) : nullptr;
  if (a != nullptr && a->RecordOf(ref.slot, ref.alloc_id, &out->record)) {
    out->record.backend = SlotBackend::kCuda;
    // As the launch saw it: a free that came after the launch is not part of its story.
    if (!ref.freed) out->record.freed_by = FreedBy::kNotFreed;
    return;
  }
  // The slot went to another allocation since: what the launch saw.
  SlotRecord r{};
  r.alloc_id = ref.alloc_id;
  r.user = ref.user;
  r.size = ref.size;
  r.mode = static_cast<Mode>(ref.mode);
  r.freed_by = ref.freed ? FreedBy::kExplicit : FreedBy::kNotFreed;
  r.backend = SlotBackend::kCuda;
  out->record = r;
}

void OnStickyError(cuda::CUresult err, const char* where, uint64_t exact_launch) {
  if (!Installed()) return;
  // The device of the calling thread's context; none made there: not ours.
  cuda::CUcontext ctx = nullptr;
  cuda::CUdevice dev = 0;
  if (g_drv->cuCtxGetCurrent(&ctx) != cuda::kSuccess || ctx == nullptr || g_drv->cuCtxGetDevice(&dev) != cuda::kSuccess)
    dev = 0;
  DeviceAllocator* a = dev >= 0 && dev < kMaxDevices ? __atomic_load_n(&g_devices[dev], __ATOMIC_ACQUIRE) : nullptr;
  if (a != nullptr) a->NoteBroken(err, where, exact_launch);
}

void CheckHealthAll(const char* where) {
  ForEachDevice([&](DeviceAllocator* a) { return a->CheckHealth(where), true; });
}

void CheckPendingAll() {
  ForEachDevice([](DeviceAllocator* a) { return a->CheckPendingNow(), true; });
}

DeviceStats TotalStats() {
  DeviceStats t;
  ForEachDevice([&](DeviceAllocator* a) { return t.Add(a->Stats()), true; });
  return t;
}

void ShutdownAll() {
  StopTracking();
  ForEachDevice([](DeviceAllocator* a) { return a->Shutdown(), true; });
}

const char* LastError() {
  if (!Installed()) return g_install_error.c_str();
  return t_last_error.c_str();
}

void SetLastError(const char* text) { t_last_error = text ? text : ""; }

}  // namespace device
}  // namespace mate
