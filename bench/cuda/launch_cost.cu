// What launch tracking costs per tracked driver call, apart from any
// training loop: the host time of a kernel launch (an empty kernel, through
// the runtime as PyTorch launches) and of an event record + stream wait
// pair, with the guard loaded or not.
//
//   launch_cost [<libmate_guard_cuda.so>] [batches] [per batch] [background]
// background: what a second thread of the process does meanwhile, as the
// guard's own background thread does beside a training loop: none (the
// default), spin (CPU only), query (an event record + query loop), sync
// (a 4 KiB copy to the host and a stream synchronize, as a canary
// readback), vmm (map a 2 MiB range, grant access, unmap: the ready pool's
// driver work), launch (empty kernels on its own stream, as PyTorch's
// autograd thread launches beside the main thread). The launches then show what the other thread's driver
// calls cost them, with and without CUPTI subscribed.
// Without the library: plain. With it: the guard installed from the
// handoff MATE_GUARD_SETTINGS (as guard-run writes it), so its settings
// (trackLaunches) and MATE_GUARD_CUPTI_EMPTY pick the variant. Only the
// calls are timed: each batch is waited for outside the clock, so the
// queue never fills and the GPU's own time is not in the figure.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

__global__ void Empty(float* p) {
  if (p != nullptr && threadIdx.x == 1024) p[0] = 0;  // never true: the kernel does nothing
}

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The other thread's loop until `stop`; returns how many rounds it made.
long Background(const char* mode, std::atomic<bool>* stop) {
  long n = 0;
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  void* dev = nullptr;
  void* host = nullptr;
  cudaMalloc(&dev, 4096);
  cudaMallocHost(&host, 4096);
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
  size_t gran = 2 << 20;
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemAccessDesc access;
  memset(&access, 0, sizeof access);
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  // The driver's own entry points (the runtime has no mapping calls).
  void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto sym = [&](const char* name) { return cu ? dlsym(cu, name) : nullptr; };
  auto reserve =
      (CUresult (*)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long))sym("cuMemAddressReserve");
  auto create = (CUresult (*)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                              unsigned long long))sym("cuMemCreate");
  auto map =
      (CUresult (*)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long))sym("cuMemMap");
  auto set_access = (CUresult (*)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t))sym("cuMemSetAccess");
  auto unmap = (CUresult (*)(CUdeviceptr, size_t))sym("cuMemUnmap");
  if (strcmp(mode, "vmm") == 0) {
    if (!reserve || !create || !map || !set_access || !unmap) return -1;
    if (reserve(&va, gran, 0, 0, 0) != CUDA_SUCCESS || create(&h, gran, &prop, 0) != CUDA_SUCCESS) return -1;
  }
  while (!stop->load(std::memory_order_relaxed)) {
    if (strcmp(mode, "spin") == 0) {
      volatile long x = 0;
      for (int i = 0; i < 1000; i++) x += i;
    } else if (strcmp(mode, "query") == 0) {
      cudaEventRecord(ev, s);
      cudaEventQuery(ev);
    } else if (strcmp(mode, "sync") == 0) {
      cudaMemcpyAsync(host, dev, 4096, cudaMemcpyDeviceToHost, s);
      cudaStreamSynchronize(s);
    } else if (strcmp(mode, "launch") == 0) {
      for (int i = 0; i < 100; i++) Empty<<<1, 32, 0, s>>>(nullptr);
      cudaStreamSynchronize(s);
    } else if (strcmp(mode, "vmm") == 0) {
      if (map(va, gran, 0, h, 0) != CUDA_SUCCESS || set_access(va, gran, &access, 1) != CUDA_SUCCESS ||
          unmap(va, gran) != CUDA_SUCCESS)
        return -n - 1;  // a failed round: negative
    } else {
      break;
    }
    n++;
  }
  return n;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  void* lib = nullptr;
  if (argc > 1 && argv[1][0] != '\0') {
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return printf("dlopen: %s\n", dlerror()), 2;
    auto install = (int (*)())dlsym(lib, "mate_guard_install_from_env");
    if (install() != 0)
      return printf("install: %s\n", ((const char* (*)())dlsym(lib, "mate_guard_install_error"))()), 2;
  }
  int batches = argc > 2 ? atoi(argv[2]) : 200;
  int per = argc > 3 ? atoi(argv[3]) : 500;
  cudaStream_t s, other;
  cudaStreamCreate(&s);
  cudaStreamCreate(&other);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  float* buf = nullptr;
  cudaMalloc(&buf, 4096);
  for (int i = 0; i < 1000; i++) Empty<<<1, 32, 0, s>>>(buf);  // warm up
  cudaDeviceSynchronize();
  const char* bg_mode = argc > 4 ? argv[4] : "none";
  std::atomic<bool> stop{false};
  long bg_rounds = 0;
  std::thread bg([&] { bg_rounds = Background(bg_mode, &stop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<double> launch, order;
  for (int b = 0; b < batches; b++) {
    auto t0 = Clock::now();
    for (int i = 0; i < per; i++) Empty<<<1, 32, 0, s>>>(buf);
    auto t1 = Clock::now();
    cudaStreamSynchronize(s);
    launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / per);
    t0 = Clock::now();
    for (int i = 0; i < per; i++) {
      cudaEventRecord(ev, s);
      cudaStreamWaitEvent(other, ev, 0);
    }
    t1 = Clock::now();
    cudaDeviceSynchronize();
    order.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / per);
  }
  stop = true;
  bg.join();
  cudaError_t e = cudaGetLastError();
  printf(
      "launch %.3f us, event record + stream wait %.3f us (median of %d batches of %d; background %s, %ld "
      "rounds)%s%s\n",
      Median(launch), Median(order), batches, per, bg_mode, bg_rounds,
      e == cudaSuccess ? "" : " error: ", e == cudaSuccess ? "" : cudaGetErrorString(e));
  cudaFree(buf);
  if (lib) ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  return e == cudaSuccess ? 0 : 1;
}
