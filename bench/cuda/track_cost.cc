// Per-launch host cost of launch tracking on the simulated driver (no GPU;
// see packages/core-native/test/sim/README.md): a kernel whose parameters are three guarded pointers and
// a 512-byte by-value struct (PyTorch's elementwise kernels: pointers and
// an offset calculator), launched from `threads` threads. It measures the tracker's
// own work per launch (Record: the kernel table, stream clocks, the log,
// the parameter scan and the uses noted), not CUPTI's or the driver's.
//   MATE_GUARD_SETTINGS='{"version":1,"settings":{"trackLaunches":true},"explicit":[]}' \
//   /tmp/track_cost packages/core-native/build/Release/libmate_guard_cuda.so [threads] [launches] [evict MiB]
// evict: between launches, each thread writes a buffer of that many MiB
// in turn, 64 KiB a launch, as a training step's own work pushes the
// tracker's data out of the caches (compare with trackLaunches false).
// (trackLaunches false: the same loop untracked.)
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>
#include "fake_kernel.h"
#include "mate_guard.h"
int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* fake = dlopen(getenv("MATE_GUARD_CUDA_DRIVER"), RTLD_NOW);
  if (!lib || !fake) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  if (((int (*)())dlsym(lib, "mate_guard_install_from_env"))() != 0) return 1;
  auto launch = (FakeLaunch)dlsym(fake, "fake_launch");
  auto create = (FakeStreamCreate)dlsym(fake, "fake_stream_create");
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  long n = argc > 3 ? atol(argv[3]) : 200000;
  size_t evict = argc > 4 ? atol(argv[4]) << 20 : 0;
  static FakeFunc k{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
                    4,
                    {8, 8, 8, 512}};
  std::vector<std::thread> ts;
  std::mutex mu;
  double launch_us = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; t++)
    ts.emplace_back([&] {
      void* s;
      create(&s, 1);
      void *a, *b, *c;
      mate_guard_cuda_alloc(&a, 4096, s);
      mate_guard_cuda_alloc(&b, 4096, s);
      mate_guard_cuda_alloc(&c, 4096, s);
      char blob[512];
      for (int i = 0; i < 512; i++) blob[i] = (char)i;
      void* params[4] = {&a, &b, &c, blob};
      std::vector<char> other(evict ? evict : 1);
      size_t at = 0;
      double in_launch = 0;  // evicting: the launches' own time, the writes left out
      for (long i = 0; i < n; i++) {
        if (!evict) {
          launch(&k, s, params);
          continue;
        }
        auto a = std::chrono::steady_clock::now();
        launch(&k, s, params);
        in_launch += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
        memset(other.data() + at, (int)i, 65536);
        at = (at + 65536) % (evict - evict % 65536);
      }
      if (evict) {
        std::lock_guard<std::mutex> lock(mu);
        launch_us += in_launch;
      }
    });
  for (auto& t : ts) t.join();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (evict) us = launch_us / threads;
  printf("%d thread(s): %.3f us per launch per thread%s\n", threads, us / n, evict ? " (in the launch calls)" : "");
  ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  return 0;
}
