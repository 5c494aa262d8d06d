// The C ABI of include/mate_guard.h: one API table, found by addons through
// mate_guard_get_api, and drop-in replacements with the CUDA signatures for
// redirecting a module's own imports.
#include <stdio.h>

#include <cstring>
#include <mutex>

#include "mate_guard.h"
#include "device/embed/c_api.h"
#include "device/device_guard.h"

namespace mate {
namespace device {
namespace {

using cuda::CUdeviceptr;
using cuda::CUstream;

CUstream S(void* stream) { return static_cast<CUstream>(stream); }

int CudaInstalled() { return Installed() ? 1 : 0; }

int CudaAlloc(void** ptr, size_t size, void* stream) {
  if (!Installed()) return MATE_GUARD_NOT_INSTALLED;
  CUdeviceptr p = 0;
  int r = Allocate(-1, size, S(stream), &p);
  *ptr = reinterpret_cast<void*>(p);
  return r;
}

int CudaFree(void* ptr, void* stream) {
  if (!Installed()) return MATE_GUARD_NOT_INSTALLED;
  return Free(reinterpret_cast<CUdeviceptr>(ptr), S(stream), false);
}

int CudaRecordStream(void* ptr, void* stream) {
  if (!Installed()) return MATE_GUARD_NOT_INSTALLED;
  return RecordStream(reinterpret_cast<CUdeviceptr>(ptr), S(stream));
}

int CudaStats(mate_guard_cuda_stats* out, size_t out_size) {
  if (!Installed()) return MATE_GUARD_NOT_INSTALLED;
  DeviceStats s = TotalStats();
  mate_guard_cuda_stats o{};
  o.allocations = s.allocations;
  o.frees = s.frees;
  o.live = s.live;
  o.peak_live = s.peak_live;
  o.live_bytes = s.live_bytes;
  o.fallbacks = s.fallbacks;
  o.quarantined = s.quarantined;
  o.physical_bytes = s.physical_bytes;
  o.violations = s.violations;
  o.granule = s.granule;
  memcpy(out, &o, out_size < sizeof(o) ? out_size : sizeof(o));
  return 0;
}

int CudaOwns(const void* ptr) { return Owns(reinterpret_cast<CUdeviceptr>(ptr)) ? 1 : 0; }

// Replacements. With the guard off they pass through to the driver, so a
// redirected module behaves as before (the runtime's cudaMalloc and the
// driver's cuMemAlloc hand out interchangeable memory in the primary context).
const cuda::Driver* Drv() {
  const char* why = nullptr;
  return Driver() ? Driver() : cuda::Load(&why);
}

int AllocOrPass(CUdeviceptr* out, size_t size, CUstream stream, bool async) {
  if (Installed()) return Allocate(-1, size, stream, out);
  const cuda::Driver* d = Drv();
  if (d == nullptr) return cuda::kErrorNotInitialized;
  return async ? d->cuMemAllocAsync(out, size, stream) : d->cuMemAlloc(out, size);
}

int FreeOrPass(CUdeviceptr ptr, CUstream stream, bool async) {
  if (Installed()) return Free(ptr, stream, async);
  const cuda::Driver* d = Drv();
  if (d == nullptr) return cuda::kErrorNotInitialized;
  if (ptr == 0) return 0;
  return async ? d->cuMemFreeAsync(ptr, stream) : d->cuMemFree(ptr);
}

// cudaFree and cuMemFree synchronize the device before freeing: so do
// theirs (the program's ordering, seen as such by launch tracking), which
// also makes the canary check see every kernel's last write.
int SyncThenFree(CUdeviceptr ptr) {
  if (Installed() && Owns(ptr)) {
    int r = Driver()->cuCtxSynchronize();
    if (r != 0) return r;
  }
  return FreeOrPass(ptr, nullptr, false);
}

int ReplCudaMalloc(void** ptr, size_t size) {
  CUdeviceptr p = 0;
  int r = AllocOrPass(&p, size, nullptr, false);
  *ptr = reinterpret_cast<void*>(p);
  return r;
}

int ReplCudaFree(void* ptr) {
  if (ptr == nullptr) {
    // cudaFree(0) is the usual way to start the runtime: make sure a context
    // is current, as the runtime would.
    const cuda::Driver* d = Drv();
    if (d == nullptr) return cuda::kErrorNotInitialized;
    cuda::CUcontext cur = nullptr;
    if (d->cuCtxGetCurrent(&cur) == cuda::kSuccess && cur == nullptr) {
      cuda::CUcontext primary = nullptr;
      int r = d->cuDevicePrimaryCtxRetain(&primary, 0);
      if (r != 0) return r;
      return d->cuCtxSetCurrent(primary);
    }
    return 0;
  }
  return SyncThenFree(reinterpret_cast<CUdeviceptr>(ptr));
}

int ReplCudaMallocAsync(void** ptr, size_t size, void* stream) {
  CUdeviceptr p = 0;
  int r = AllocOrPass(&p, size, S(stream), true);
  *ptr = reinterpret_cast<void*>(p);
  return r;
}

int ReplCudaFreeAsync(void* ptr, void* stream) {
  return FreeOrPass(reinterpret_cast<CUdeviceptr>(ptr), S(stream), true);
}

int ReplCuMemAlloc(unsigned long long* ptr, size_t size) { return AllocOrPass(ptr, size, nullptr, false); }
int ReplCuMemFree(unsigned long long ptr) { return SyncThenFree(ptr); }
int ReplCuMemAllocAsync(unsigned long long* ptr, size_t size, void* stream) {
  return AllocOrPass(ptr, size, S(stream), true);
}
int ReplCuMemFreeAsync(unsigned long long ptr, void* stream) { return FreeOrPass(ptr, S(stream), true); }

// Graph capture records allocations into a graph replayed later, beyond
// the guard's reach: refused, with one message, while guarding is on.
int RefuseCapture(const char* call) {
  dprintf(2, "[mate-guard] %s refused: %s\n", call, kGraphCaptureRefused);
  SetLastError(kGraphCaptureRefused);
  return cuda::kErrorStreamCaptureUnsupported;
}
int ReplCudaStreamBeginCapture(void*, int) { return RefuseCapture("cudaStreamBeginCapture"); }
int ReplCudaStreamBeginCaptureToGraph(void*, void*, const void*, const void*, size_t, int) {
  return RefuseCapture("cudaStreamBeginCaptureToGraph");
}
int ReplCuStreamBeginCapture(void*, int) { return RefuseCapture("cuStreamBeginCapture"); }
int ReplCuStreamBeginCaptureToGraph(void*, void*, const void*, const void*, size_t, int) {
  return RefuseCapture("cuStreamBeginCaptureToGraph");
}

// A legacy IPC handle names cudaMalloc memory; a guarded range is a
// virtual-memory mapping it cannot name. Said once, with what works.
constexpr const char* kIpcRefused =
    "a legacy CUDA IPC handle cannot name a guarded allocation (guarded ranges are CUDA virtual-memory mappings); "
    "share it through torch.multiprocessing, which mate-guard supports, or leave this module's device memory unguarded";
int IpcHandle(const char* call, void* handle, CUdeviceptr ptr) {
  if (Owns(ptr)) {
    static std::once_flag said;
    std::call_once(said, [call] { dprintf(2, "[mate-guard] %s refused: %s\n", call, kIpcRefused); });
    SetLastError(kIpcRefused);
    return cuda::kErrorInvalidValue;
  }
  const cuda::Driver* d = Drv();
  if (d == nullptr || d->cuIpcGetMemHandle == nullptr) return cuda::kErrorNotInitialized;
  return d->cuIpcGetMemHandle(handle, ptr);
}
int ReplCudaIpcGetMemHandle(void* handle, void* ptr) {
  return IpcHandle("cudaIpcGetMemHandle", handle, reinterpret_cast<CUdeviceptr>(ptr));
}
int ReplCuIpcGetMemHandle(void* handle, unsigned long long ptr) { return IpcHandle("cuIpcGetMemHandle", handle, ptr); }

struct Replacement {
  const char* symbol;
  void* fn;
};

const Replacement kReplacements[] = {
    {"cudaMalloc", reinterpret_cast<void*>(&ReplCudaMalloc)},
    {"cudaFree", reinterpret_cast<void*>(&ReplCudaFree)},
    {"cudaMallocAsync", reinterpret_cast<void*>(&ReplCudaMallocAsync)},
    {"cudaFreeAsync", reinterpret_cast<void*>(&ReplCudaFreeAsync)},
    {"cuMemAlloc", reinterpret_cast<void*>(&ReplCuMemAlloc)},
    {"cuMemAlloc_v2", reinterpret_cast<void*>(&ReplCuMemAlloc)},
    {"cuMemFree", reinterpret_cast<void*>(&ReplCuMemFree)},
    {"cuMemFree_v2", reinterpret_cast<void*>(&ReplCuMemFree)},
    {"cuMemAllocAsync", reinterpret_cast<void*>(&ReplCuMemAllocAsync)},
    {"cuMemFreeAsync", reinterpret_cast<void*>(&ReplCuMemFreeAsync)},
    {"cudaStreamBeginCapture", reinterpret_cast<void*>(&ReplCudaStreamBeginCapture)},
    {"cudaStreamBeginCaptureToGraph", reinterpret_cast<void*>(&ReplCudaStreamBeginCaptureToGraph)},
    {"cuStreamBeginCapture", reinterpret_cast<void*>(&ReplCuStreamBeginCapture)},
    {"cuStreamBeginCapture_v2", reinterpret_cast<void*>(&ReplCuStreamBeginCapture)},
    {"cuStreamBeginCapture_ptsz", reinterpret_cast<void*>(&ReplCuStreamBeginCapture)},
    {"cuStreamBeginCapture_v2_ptsz", reinterpret_cast<void*>(&ReplCuStreamBeginCapture)},
    {"cuStreamBeginCaptureToGraph", reinterpret_cast<void*>(&ReplCuStreamBeginCaptureToGraph)},
    {"cudaIpcGetMemHandle", reinterpret_cast<void*>(&ReplCudaIpcGetMemHandle)},
    {"cuIpcGetMemHandle", reinterpret_cast<void*>(&ReplCuIpcGetMemHandle)},
};

}  // namespace

const char* const kGraphCaptureRefused = "guard allocator debug mode does not support graph capture";

const ReplacementEntry* CudaReplacements(size_t* n) {
  static_assert(sizeof(Replacement) == sizeof(ReplacementEntry), "same layout");
  *n = sizeof(kReplacements) / sizeof(kReplacements[0]);
  return reinterpret_cast<const ReplacementEntry*>(kReplacements);
}

namespace {

void* CudaReplacement(const char* symbol) {
  if (symbol == nullptr) return nullptr;
  for (const Replacement& r : kReplacements)
    if (strcmp(r.symbol, symbol) == 0) return r.fn;
  return nullptr;
}

const mate_guard_api kApi = {
    MATE_GUARD_API_VERSION,
    sizeof(mate_guard_api),
    CudaInstalled,
    CudaAlloc,
    CudaFree,
    CudaRecordStream,
    CudaStats,
    CudaOwns,
    CudaReplacement,
    LastError,
};

}  // namespace
}  // namespace device
}  // namespace mate

extern "C" __attribute__((visibility("default"))) const mate_guard_api* mate_guard_get_api(uint32_t version) {
  return version == MATE_GUARD_API_VERSION ? &mate::device::kApi : nullptr;
}
