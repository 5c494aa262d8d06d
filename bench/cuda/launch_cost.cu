// What launch tracking costs per tracked driver call, apart from any
// training loop: the host time of a kernel launch (an empty kernel, through
// the runtime as PyTorch launches) and of an event record + stream wait
// pair, with the guard loaded or not.
//
//   launch_cost [<libmate_guard_cuda.so>] [batches] [per batch]
// Without the library: plain. With it: the guard installed from the
// handoff MATE_GUARD_SETTINGS (as guard-run writes it), so its settings
// (trackLaunches) and MATE_GUARD_CUPTI_EMPTY pick the variant. Only the
// calls are timed: each batch is waited for outside the clock, so the
// queue never fills and the GPU's own time is not in the figure.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <vector>

__global__ void Empty(float* p) {
  if (p != nullptr && threadIdx.x == 1024) p[0] = 0;  // never true: the kernel does nothing
}

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  void* lib = nullptr;
  if (argc > 1 && argv[1][0] != '\0') {
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return printf("dlopen: %s\n", dlerror()), 2;
    auto install = (int (*)())dlsym(lib, "mate_guard_install_from_env");
    if (install() != 0) return printf("install: %s\n", ((const char* (*)())dlsym(lib, "mate_guard_install_error"))()), 2;
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
  cudaError_t e = cudaGetLastError();
  printf("launch %.3f us, event record + stream wait %.3f us (median of %d batches of %d)%s%s\n", Median(launch),
         Median(order), batches, per, e == cudaSuccess ? "" : " error: ", e == cudaSuccess ? "" : cudaGetErrorString(e));
  cudaFree(buf);
  if (lib) ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  return e == cudaSuccess ? 0 : 1;
}
