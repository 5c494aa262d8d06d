// The device guard on a real GPU, through its C ABI (include/mate_guard.h):
// correctness scenarios (each in its own process: a fault ends the CUDA
// context) and allocate+free timings against cudaMalloc+cudaFree.
//
//   guard_probe <libmate_guard_cuda.so> <scenario>
// scenarios: overrun | underrun | canary | uaf | bench | driver
// Settings come from the handoff MATE_GUARD_SETTINGS (JSON), as under guard-run.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "mate_guard.h"

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) printf("%s -> %s\n", #x, cudaGetErrorString(e_)); \
  } while (0)

__global__ void Fill(float* p, long from, long to, float v) {
  long i = from + blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < to) p[i] = v;
}

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void* Alloc(size_t n) {
  void* p = nullptr;
  int r = mate_guard_cuda_alloc(&p, n, nullptr);
  if (r) printf("mate_guard_cuda_alloc(%zu) -> %d %s\n", n, r, mate_guard_last_error());
  return p;
}

static void Launch(float* p, long from, long to) {
  Fill<<<(unsigned)((to - from + 255) / 256), 256>>>(p, from, to, 1.0f);
}

static int Overrun(long n) {  // one float past the end
  float* p = (float*)Alloc(n * 4);
  printf("allocated %ld floats at %p\n", n, (void*)p);
  Launch(p, 0, n + 1);
  cudaError_t e = cudaDeviceSynchronize();
  printf("after the overrun kernel: %s\n", cudaGetErrorString(e));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return e == cudaSuccess ? 1 : 0;
}

static int Underrun(long n) {  // one float before the start
  float* p = (float*)Alloc(n * 4);
  Launch(p, -1, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("after the underrun kernel: %s\n", cudaGetErrorString(e));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return e == cudaSuccess ? 1 : 0;
}

static int Canary(long n) {  // both sides, expecting the canary side to be caught at free
  float* a = (float*)Alloc(n * 4);
  float* b = (float*)Alloc(n * 4);
  const char* settings = getenv("MATE_GUARD_SETTINGS");
  bool head = settings && strstr(settings, "\"mode\":\"head\"") != nullptr;
  if (head) Launch(a, 0, n + 1);
  else Launch(a, -1, n);
  Launch(b, 0, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("after the %s kernel: %s\n", head ? "overrun (head mode)" : "underrun (tail mode)", cudaGetErrorString(e));
  mate_guard_cuda_free(a, nullptr);
  mate_guard_cuda_free(b, nullptr);
  mate_guard_cuda_stats st;
  mate_guard_cuda_get_stats(&st);
  printf("violations=%llu\n", (unsigned long long)st.violations);
  return st.violations == 1 ? 0 : 1;
}

static int UseAfterFree(long n) {
  float* p = (float*)Alloc(n * 4);
  Launch(p, 0, n);
  cudaDeviceSynchronize();
  mate_guard_cuda_free(p, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the range is unmapped by now
  Launch(p, 0, 1);
  cudaError_t e = cudaDeviceSynchronize();
  printf("after the use-after-free kernel: %s\n", cudaGetErrorString(e));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return e == cudaSuccess ? 1 : 0;
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void Busy(double us) {
  double until = Now() + us * 1e-6;
  while (Now() < until) {
  }
}

// Side by side: per repetition, cudaMalloc+cudaFree then guarded, n pairs
// each. Patterns: a tight loop (allocate, free); bursts of 8 allocations
// then their frees; and "paced": 100 us of other host work after each
// allocation and each free (a loop that computes between allocations),
// timing only the allocate and free calls.
static int Bench(int reps, int n, int burst) {
  size_t sizes[] = {256, 64 << 10, 16 << 20};
  printf("| size | pattern | cudaMalloc+cudaFree | guarded alloc+free | ratio |\n|---|---|---|---|---|\n");
  cudaFree(0);
  for (size_t size : sizes) {
    for (int pattern = 0; pattern < 3; pattern++) {
      int b = pattern == 1 ? burst : 1;
      bool paced = pattern == 2;
      int count = paced ? n / 4 : n;
      std::vector<double> plain, guarded;
      std::vector<void*> ptrs(b);
      for (int rep = 0; rep < reps + 1; rep++) {
        double tp = 0, tg = 0;
        for (int side = 0; side < 2; side++) {
          double spent = 0;
          for (int i = 0; i < count; i += b) {
            double t0 = Now();
            for (int k = 0; k < b; k++) {
              if (side == 0) CHECK(cudaMalloc(&ptrs[k], size));
              else ptrs[k] = Alloc(size);
            }
            double t1 = Now();
            if (paced) Busy(100);
            double t2 = Now();
            for (int k = 0; k < b; k++) {
              if (side == 0) CHECK(cudaFree(ptrs[k]));
              else mate_guard_cuda_free(ptrs[k], nullptr);
            }
            double t3 = Now();
            if (paced) Busy(100);
            spent += (t1 - t0) + (t3 - t2);
          }
          (side == 0 ? tp : tg) = spent / count * 1e6;
        }
        if (rep == 0) continue;  // warm-up: size classes learned, chunks created
        plain.push_back(tp);
        guarded.push_back(tg);
      }
      double p = Median(plain), g = Median(guarded);
      const char* name = pattern == 0   ? "tight loop"
                         : pattern == 1 ? "bursts of 8"
                                        : "paced (100 us work between calls)";
      printf("| %zu B | %s | %.1f us | %.1f us | %.2fx |\n", size, name, p, g, g / p);
    }
  }
  mate_guard_cuda_stats st;
  mate_guard_cuda_get_stats(&st);
  printf("guarded: allocations=%llu fallbacks=%llu physical=%llu MiB violations=%llu\n",
         (unsigned long long)st.allocations, (unsigned long long)st.fallbacks,
         (unsigned long long)(st.physical_bytes >> 20), (unsigned long long)st.violations);
  return 0;
}

// Raw driver costs behind the design (no guard involved).
static int DriverCosts() {
  cudaFree(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t g = 0;
  cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUmemAccessDesc acc = {};
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const int N = 200;
  CUdeviceptr va;
  cuMemAddressReserve(&va, (size_t)N * 2 * g * 8, g, 0, 0);
  for (int gran : {1, 8}) {
    std::vector<CUmemGenericAllocationHandle> h(N);
    double t0 = Now();
    for (int i = 0; i < N; i++) cuMemCreate(&h[i], gran * g, &prop, 0);
    double t1 = Now();
    for (int i = 0; i < N; i++) cuMemMap(va + (size_t)i * 2 * g * 8, gran * g, 0, h[i], 0);
    double t2 = Now();
    for (int i = 0; i < N; i++) cuMemSetAccess(va + (size_t)i * 2 * g * 8, gran * g, &acc, 1);
    double t3 = Now();
    CUstream s;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    for (int i = 0; i < N; i++) cuMemsetD8Async(va + (size_t)i * 2 * g * 8, 0xCB, gran * g, s);
    cuStreamSynchronize(s);
    double t4 = Now();
    for (int i = 0; i < N; i++) cuMemUnmap(va + (size_t)i * 2 * g * 8, gran * g);
    double t5 = Now();
    for (int i = 0; i < N; i++) cuMemRelease(h[i]);
    double t6 = Now();
    printf(
        "%d granule(s): create %.1f us, map %.1f us, setAccess %.1f us, memset(async) %.1f us, unmap %.1f us, release "
        "%.1f us\n",
        gran, (t1 - t0) / N * 1e6, (t2 - t1) / N * 1e6, (t3 - t2) / N * 1e6, (t4 - t3) / N * 1e6, (t5 - t4) / N * 1e6,
        (t6 - t5) / N * 1e6);
  }
  // map+setAccess+unmap cycles from several threads at once (own chunks and ranges each)
  for (int threads : {1, 2, 4}) {
    std::vector<std::thread> ts;
    const int M = 300;
    double t0 = Now();
    for (int t = 0; t < threads; t++) {
      ts.emplace_back([&, t] {
        cuCtxSetCurrent(nullptr);
        CUcontext ctx;
        cuDevicePrimaryCtxRetain(&ctx, dev);
        cuCtxSetCurrent(ctx);
        CUmemGenericAllocationHandle h;
        cuMemCreate(&h, g, &prop, 0);
        for (int i = 0; i < M; i++) {
          CUdeviceptr at = va + ((size_t)t * M + i) % (N * 8) * 2 * g;
          cuMemMap(at, g, 0, h, 0);
          cuMemSetAccess(at, g, &acc, 1);
          cuMemUnmap(at, g);
        }
        cuMemRelease(h);
      });
    }
    for (auto& t : ts) t.join();
    double dt = Now() - t0;
    printf("%d thread(s): %.1f us per map+setAccess+unmap cycle overall\n", threads, dt / (threads * M) * 1e6);
  }
  // readback of 4 KiB and an event, the free path's work
  {
    void* host;
    cuMemAllocHost(&host, 8192);
    CUdeviceptr d;
    cuMemAlloc(&d, 8192);
    CUevent ev;
    cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    const int K = 2000;
    double t0 = Now();
    for (int i = 0; i < K; i++) {
      cuMemcpyDtoHAsync(host, d, 4096, 0);
      cuEventRecord(ev, 0);
    }
    double t1 = Now();
    cuEventSynchronize(ev);
    for (int i = 0; i < K; i++) {
      cuMemcpyDtoHAsync(host, d, 4096, 0);
      cuEventRecord(ev, 0);
      cuEventSynchronize(ev);
    }
    double t2 = Now();
    printf("free path: readback+event %.1f us async, %.1f us with the wait\n", (t1 - t0) / K * 1e6,
           (t2 - t1) / K * 1e6);
  }
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 3) return 2;
  const char* scenario = argv[2];
  if (strcmp(scenario, "driver") == 0) return DriverCosts();
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    printf("dlopen: %s\n", dlerror());
    return 2;
  }
  auto install = (int (*)())dlsym(lib, "mate_guard_install_from_env");
  if (install() != 0) {
    printf("install: %s\n", ((const char* (*)())dlsym(lib, "mate_guard_install_error"))());
    return 2;
  }
  int rc = 2;
  if (strcmp(scenario, "overrun") == 0) rc = Overrun(1000);
  else if (strcmp(scenario, "underrun") == 0) rc = Underrun(1000);
  else if (strcmp(scenario, "canary") == 0) rc = Canary(1000);
  else if (strcmp(scenario, "uaf") == 0) rc = UseAfterFree(1000);
  else if (strcmp(scenario, "bench") == 0) rc = Bench(argc > 3 ? atoi(argv[3]) : 7, argc > 4 ? atoi(argv[4]) : 1000, 8);
  ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  return rc;
}
