// A stand-in for libcuda.so.1 over host memory, to run the device guard's
// logic on a machine without a GPU (MATE_GUARD_CUDA_DRIVER=/path/libfakecuda.so).
// "Device" memory is host memory: host code plays the kernels.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "fake_kernel.h"

typedef int CUresult;
typedef unsigned long long dptr;
static std::atomic<int> g_err{0};
static thread_local void* t_ctx = nullptr;
static int g_dummy;
extern "C" {
void fake_cuda_set_error(int e) { g_err = e; }
static CUresult E() { return g_err.load(); }
// A faulting kernel's error (FAKE_CUDA_FAULT_KERNEL) until its work runs:
// the simulated GPU runs a stream's work when something waits for it (a
// context synchronize, or that stream's), so the guard's own calls on its
// other streams meanwhile see nothing yet, as on a GPU busy with the work
// queued before the kernel.
static std::atomic<int> g_fault_queued{0};
static std::atomic<void*> g_fault_stream{nullptr};
static CUresult Ran(void* stream, bool whole_context) {
  if ((whole_context || stream == g_fault_stream.load()) && g_fault_queued.load()) g_err = g_fault_queued.exchange(0);
  return E();
}
CUresult cuInit(unsigned) { return 0; }
CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == 700   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
       : r == 710 ? "CUDA_ERROR_ASSERT"
       : r == 2   ? "CUDA_ERROR_OUT_OF_MEMORY"
                  : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == 700 ? "an illegal memory access was encountered" : r == 710 ? "device-side assert triggered" : "fake error";
  return 0;
}
CUresult cuDeviceGet(int* d, int o) {
  *d = o;
  return o == 0 ? 0 : 101;
}
CUresult cuDeviceGetCount(int* c) {
  *c = 1;
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int, int) {
  *v = 1;
  return 0;
}
static std::atomic<int> g_retained{0};
CUresult cuDevicePrimaryCtxGetState(int, unsigned* flags, int* active) {
  *flags = 0;
  // FAKE_CUDA_CONTEXT_ACTIVE: the program used CUDA before the guard came.
  *active = g_retained.load() || getenv("FAKE_CUDA_CONTEXT_ACTIVE") != nullptr;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void** c, int) {
  g_retained = 1;
  *c = &g_dummy;
  return 0;
}
CUresult cuCtxGetCurrent(void** c) {
  *c = t_ctx;
  return 0;
}
CUresult cuCtxSetCurrent(void* c) {
  t_ctx = c;
  return 0;
}
CUresult cuCtxGetDevice(int* d) {
  *d = 0;
  return 0;
}
CUresult cuCtxSynchronize();  // below: it calls back as CUPTI does
// Device memory: FAKE_CUDA_MEMORY_BYTES bounds what cuMemCreate and
// cuMemAlloc hand out together (default 80 GiB, never exhausted in tests).
static std::mutex g_mem_mu;
static std::unordered_map<unsigned long long, size_t> g_sizes;  // chunk handle or pointer -> bytes
static size_t g_used = 0;
static size_t MemTotal() {
  const char* v = getenv("FAKE_CUDA_MEMORY_BYTES");
  return v ? strtoull(v, nullptr, 10) : 80ull << 30;
}
static bool Take(unsigned long long key, size_t n) {
  std::lock_guard<std::mutex> lock(g_mem_mu);
  if (g_used + n > MemTotal()) return false;
  g_used += n;
  g_sizes[key] = n;
  return true;
}
static void Give(unsigned long long key) {
  std::lock_guard<std::mutex> lock(g_mem_mu);
  auto it = g_sizes.find(key);
  if (it == g_sizes.end()) return;
  g_used -= it->second;
  g_sizes.erase(it);
}
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) {
  std::lock_guard<std::mutex> lock(g_mem_mu);
  *t = MemTotal();
  *f = *t - g_used;
  return 0;
}
CUresult cuMemAlloc_v2(dptr* p, size_t n) {
  if (E()) return E();
  void* m = aligned_alloc(256, (n + 255) / 256 * 256);
  if (m == nullptr || !Take((dptr)m, n)) {
    free(m);
    return 2;
  }
  *p = (dptr)m;
  return 0;
}
CUresult cuMemFree_v2(dptr p) {
  Give(p);
  free((void*)p);
  return E();
}
CUresult cuMemAllocAsync(dptr* p, size_t n, void*) { return cuMemAlloc_v2(p, n); }
CUresult cuMemFreeAsync(dptr p, void*) { return cuMemFree_v2(p); }
CUresult cuMemAllocHost_v2(void** p, size_t n) {
  *p = malloc(n);
  return 0;
}
CUresult cuMemGetAllocationGranularity(size_t* g, const void*, int) {
  *g = 2u << 20;
  return 0;
}
CUresult cuMemAddressReserve(dptr* p, size_t n, size_t, dptr, unsigned long long) {
  void* m = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 2;
  *p = (dptr)m;
  return 0;
}
static std::atomic<long> g_live_chunks{0};
CUresult cuMemCreate(unsigned long long* h, size_t n, const void*, unsigned long long) {
  if (E()) return E();
  const char* lim = getenv("FAKE_CUDA_MAX_CHUNKS");
  if (lim && g_live_chunks.load() >= atol(lim)) return 2;
  int fd = memfd_create("fakecuda", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, n) != 0) return 2;
  if (!Take((unsigned long long)fd + 1, n)) {
    close(fd);
    return 2;
  }
  g_live_chunks++;
  *h = (unsigned long long)fd + 1;
  return 0;
}
CUresult cuMemRelease(unsigned long long h) {
  Give(h);
  g_live_chunks--;
  close((int)h - 1);
  return 0;
}
// FAKE_CUDA_BACKGROUND_MAP_DELAY_US: each map the guard's background
// thread makes (mapping ahead) takes that long: its pool runs behind the
// allocations, as tests of recycling need it to however fast the machine
// is. Read at each map, so a test sets it for itself.
static void BackgroundMapDelay() {
  const char* v = getenv("FAKE_CUDA_BACKGROUND_MAP_DELAY_US");
  if (v == nullptr) return;
  char name[16] = {};
  if (prctl(PR_GET_NAME, name) == 0 && strcmp(name, "mate-guard-cuda") == 0) usleep(atol(v));
}
CUresult cuMemMap(dptr p, size_t n, size_t off, unsigned long long h, unsigned long long) {
  if (E()) return E();
  BackgroundMapDelay();
  void* m = mmap((void*)p, n, PROT_NONE, MAP_SHARED | MAP_FIXED, (int)h - 1, off);
  return m == MAP_FAILED ? 1 : 0;
}
CUresult cuMemUnmap(dptr p, size_t n) {
  if (E()) return E();
  void* m = mmap((void*)p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return m == MAP_FAILED ? 1 : 0;
}
// A chunk shared with another process is its memfd, dup'ed both ways.
CUresult cuMemExportToShareableHandle(void* out, unsigned long long h, int type, unsigned long long) {
  if (type != 1) return 1;
  int fd = dup((int)h - 1);
  if (fd < 0) return 1;
  *(int*)out = fd;
  return 0;
}
CUresult cuMemImportFromShareableHandle(unsigned long long* h, void* os_handle, int type) {
  if (type != 1) return 1;
  int fd = dup((int)(intptr_t)os_handle);
  if (fd < 0) return 1;
  g_live_chunks++;
  *h = (unsigned long long)fd + 1;
  return 0;
}
CUresult cuMemAddressFree(dptr p, size_t n) { return munmap((void*)p, n) ? 1 : 0; }
CUresult cuMemSetAccess(dptr p, size_t n, const void*, size_t) {
  if (E()) return E();
  return mprotect((void*)p, n, PROT_READ | PROT_WRITE) ? 1 : 0;
}
// Memsets and device-to-host copies made (tests count the guard's canary I/O).
static std::atomic<unsigned long long> g_memsets{0}, g_dtoh_copies{0};
void fake_cuda_copy_calls(unsigned long long* memsets, unsigned long long* dtoh_copies) {
  *memsets = g_memsets.load();
  *dtoh_copies = g_dtoh_copies.load();
}
CUresult cuMemsetD8Async(dptr p, unsigned char v, size_t n, void*) {
  if (E()) return E();
  g_memsets++;
  memset((void*)p, v, n);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void* d, dptr s, size_t n, void*) {
  if (E()) return E();
  g_dtoh_copies++;
  memcpy(d, (void*)s, n);
  return 0;
}
// Declared here, defined after the fake CUPTI: the program's calls, and
// the guard's own (which it marks and launch tracking drops), call back
// as on a GPU.
CUresult cuStreamCreate(void** s, unsigned flags);
CUresult cuStreamSynchronize(void* s);
CUresult cuStreamQuery(void* s);
CUresult cuStreamWaitEvent(void* stream, void* ev, unsigned flags);
CUresult cuStreamIsCapturing(void*, int* s) {
  *s = 0;
  return 0;
}
CUresult cuEventCreate(void** e, unsigned) {
  *e = malloc(1);
  return 0;
}
CUresult cuEventRecord(void* ev, void* stream);
// fake_cuda_hold_events(1): the simulated GPU runs behind, every event
// recorded meanwhile stays not ready (a synchronize waits) until
// fake_cuda_hold_events(0).
static std::atomic<int> g_hold_events{0};
void fake_cuda_hold_events(int on) { g_hold_events = on; }
CUresult cuEventQuery(void* ev);
CUresult cuEventSynchronize(void* ev);
CUresult cuStreamGetFlags(void* s, unsigned* f) {
  *f = s ? *(unsigned char*)s : 0;
  return 0;
}
CUresult cuStreamGetCtx(void*, void** c) {
  *c = &g_dummy;
  return 0;
}

// Fake kernels (fake_kernel.h): a name and parameter sizes.
CUresult cuFuncGetParamInfo(FakeFunc* f, size_t i, size_t* off, size_t* size) {
  if ((int)i >= f->n) return 1;
  size_t o = 0;
  for (size_t k = 0; k < i; k++) o += f->sizes[k];
  *off = o;
  *size = f->sizes[i];
  return 0;
}
CUresult cuFuncGetName(const char** name, FakeFunc* f) {
  *name = f->name;
  return 0;
}

// A fake CUPTI: one subscriber; the fake_* calls below issue its driver-domain callbacks.
typedef void (*CbFn)(void*, int, unsigned, const void*);
static CbFn g_cb = nullptr;
static void* g_cb_user = nullptr;
static bool g_enabled[1024];
struct CbData {
  int site;
  const char* fn;
  const void* params;
  void* ret;
  const char* symbol;
  void* ctx;
  unsigned uid;
  unsigned long long* corr;
  unsigned corrId;
};
// FAKE_CUPTI_BUSY: another client (a profiler) holds CUPTI.
int cuptiSubscribe(void** sub, CbFn cb, void* user) {
  if (g_cb || getenv("FAKE_CUPTI_BUSY")) return 39;  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
  g_cb = cb;
  g_cb_user = user;
  *sub = &g_dummy;
  return 0;
}
int cuptiUnsubscribe(void*) {
  g_cb = nullptr;
  return 0;
}
int cuptiEnableCallback(unsigned en, void*, int domain, unsigned id) {
  if (domain == 1 && id < 1024) g_enabled[id] = en;
  return 0;
}
int cuptiGetResultString(int, const char** s) {
  *s = "fake";
  return 0;
}
static CUresult Issue(unsigned id, const char* fn, const void* params, const char* symbol, CUresult result) {
  if (!g_cb || !g_enabled[id]) return result;
  CbData d{0, fn, params, &result, symbol, &g_dummy, 1, nullptr, 0};
  g_cb(g_cb_user, 1, id, &d);
  d.site = 1;
  g_cb(g_cb_user, 1, id, &d);
  return result;
}
struct LaunchParams {
  void* f;
  unsigned g[7];
  void* stream;
  void** params;
  void** extra;
};
CUresult cuLaunchKernel(FakeFunc* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void* stream, void** params, void** extra) {
  LaunchParams p{f, {gx, gy, gz, bx, by, bz, shared}, stream, params, extra};
  // FAKE_CUDA_FAULT_KERNEL: a kernel whose name holds it faults as it runs
  // (the sticky error shows at the next synchronize of its work: the
  // guard's own under launch blocking, else the program's).
  const char* faulting = getenv("FAKE_CUDA_FAULT_KERNEL");
  if (faulting && *faulting && strstr(f->name, faulting)) {
    g_fault_stream = stream;
    g_fault_queued = 700;
  }
  return Issue(307, "cuLaunchKernel", &p, f->name, 0);  // a launch succeeds; the fault shows at a later call
}
CUresult fake_launch(FakeFunc* f, void* stream, void** params) {
  return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
}
struct EvStream {
  void* ev;
  void* stream;
};
CUresult cuEventRecord(void* ev, void* stream) {
  EvStream p{ev, stream};
  return Issue(119, "cuEventRecord", &p, nullptr, E());
}
CUresult fake_event_record(void* ev, void* stream) { return cuEventRecord(ev, stream); }
struct StreamEv {
  void* stream;
  void* ev;
  unsigned flags;
};
CUresult cuStreamWaitEvent(void* stream, void* ev, unsigned flags) {
  StreamEv p{stream, ev, flags};
  return Issue(295, "cuStreamWaitEvent", &p, nullptr, E());
}
CUresult fake_stream_wait(void* stream, void* ev) { return cuStreamWaitEvent(stream, ev, 0); }
CUresult fake_stream_wait_v2(void* stream, void* ev, unsigned flags) { return cuStreamWaitEvent(stream, ev, flags); }
CUresult cuCtxSynchronize() { return Issue(17, "cuCtxSynchronize", nullptr, nullptr, Ran(nullptr, true)); }
CUresult fake_ctx_sync() { return cuCtxSynchronize(); }
CUresult cuStreamSynchronize(void* s) { return Issue(126, "cuStreamSynchronize", &s, nullptr, Ran(s, false)); }
CUresult cuStreamQuery(void* s) { return Issue(125, "cuStreamQuery", &s, nullptr, Ran(s, false)); }
CUresult cuEventQuery(void* ev) {
  return Issue(120, "cuEventQuery", &ev, nullptr, E() ? E() : g_hold_events.load() ? 600 : 0);
}
CUresult cuEventSynchronize(void* ev) {
  while (g_hold_events.load() && !E()) usleep(1000);
  return Issue(121, "cuEventSynchronize", &ev, nullptr, E());
}
struct Create {
  void** s;
  unsigned flags;
};
CUresult cuStreamCreate(void** s, unsigned flags) {
  *s = malloc(1);
  *(unsigned char*)*s = (unsigned char)flags;
  Create p{s, flags};
  return Issue(124, "cuStreamCreate", &p, nullptr, 0);
}
CUresult fake_stream_create(void** s, unsigned flags) { return cuStreamCreate(s, flags); }
// As the driver answers the CUDA runtime: its own exported functions.
CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int, unsigned long long, int* status) {
  static void* self = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&cuInit), &info) ? dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  }();
  *fn = self ? dlsym(self, symbol) : nullptr;
  // FAKE_CUDA_UNKNOWN_WAIT: the stream wait answered with a function the
  // guard does not know (as a driver's newer version of it would be).
  if (getenv("FAKE_CUDA_UNKNOWN_WAIT") && strcmp(symbol, "cuStreamWaitEvent") == 0)
    *fn = reinterpret_cast<void*>(&fake_stream_wait_v2);
  if (status) *status = *fn ? 0 : 1;
  return *fn ? 0 : 500;  // CUDA_ERROR_NOT_FOUND
}
}
