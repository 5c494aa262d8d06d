// Self-test of the device guard over the simulated driver (see README.md).
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <chrono>
#include <thread>
#include "mate_guard.h"

typedef int (*install_fn)();
static void die_child(int) { _exit(77); }

static int in_child(void (*fn)(void*), void* arg) {
  pid_t p = fork();
  if (p == 0) {
    signal(SIGSEGV, die_child);
    signal(SIGBUS, die_child);
    fn(arg);
    _exit(0);
  }
  int st;
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
static void write_at(void* a) {
  volatile char* p = (volatile char*)((void**)a)[0];
  long off = (long)((void**)a)[1];
  p[off] = 1;
}

int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  install_fn inst = (install_fn)dlsym(lib, "mate_guard_install_from_env");
  if (inst() != 0) {
    printf("install failed: %s\n", ((const char* (*)())dlsym(lib, "mate_guard_install_error"))());
    return 1;
  }
  printf("installed=%d\n", mate_guard_cuda_installed());
  void* p = nullptr;
  int r = mate_guard_cuda_alloc(&p, 4000, nullptr);
  printf("alloc r=%d p=%p\n", r, p);
  memset(p, 7, 4000);
  r = mate_guard_cuda_free(p, nullptr);
  printf("clean free r=%d\n", r);
  // canary: tail mode underrun
  r = mate_guard_cuda_alloc(&p, 4000, nullptr);
  ((char*)p)[-3] = 9;
  r = mate_guard_cuda_free(p, nullptr);
  printf("underrun free r=%d (expect canary report above)\n", r);
  // overrun faults
  r = mate_guard_cuda_alloc(&p, 4000, nullptr);
  void* args[2] = {p, (void*)4000L};
  printf("overrun child exit=%d (77 = fault)\n", in_child(write_at, args));
  void* args2[2] = {p, (void*)3999L};
  printf("last byte child exit=%d (0)\n", in_child(write_at, args2));
  mate_guard_cuda_free(p, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  printf("uaf child exit=%d (77)\n", in_child(write_at, args2));
  r = mate_guard_cuda_free(p, nullptr);
  printf("double free r=%d\n", r);
  r = mate_guard_cuda_alloc(&p, 100, nullptr);
  r = mate_guard_cuda_free((char*)p + 16, nullptr);
  printf("invalid free r=%d\n", r);
  mate_guard_cuda_free(p, nullptr);
  // stress
  auto t0 = std::chrono::steady_clock::now();
  std::vector<void*> live;
  srand(1);
  for (int i = 0; i < 20000; i++) {
    if (live.size() < 40 && (rand() % 2 || live.empty())) {
      size_t sizes[] = {256, 4000, 65536, 1 << 20, 3 << 20, 16 << 20, 0};
      void* q;
      r = mate_guard_cuda_alloc(&q, sizes[rand() % 7], nullptr);
      if (r) {
        printf("alloc fail %d\n", r);
        break;
      }
      live.push_back(q);
    } else {
      size_t k = rand() % live.size();
      mate_guard_cuda_free(live[k], nullptr);
      live.erase(live.begin() + k);
    }
  }
  for (void* q : live) mate_guard_cuda_free(q, nullptr);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  mate_guard_cuda_stats st;
  mate_guard_cuda_get_stats(&st);
  printf(
      "stress %.3fs allocs=%llu frees=%llu live=%llu peak=%llu fallbacks=%llu quarantined=%llu phys=%llu MiB "
      "violations=%llu\n",
      s, (unsigned long long)st.allocations, (unsigned long long)st.frees, (unsigned long long)st.live,
      (unsigned long long)st.peak_live, (unsigned long long)st.fallbacks, (unsigned long long)st.quarantined,
      (unsigned long long)(st.physical_bytes >> 20), (unsigned long long)st.violations);
  // tight loop timing
  for (size_t size : {256ul, 65536ul, 16ul << 20}) {
    auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; i++) {
      mate_guard_cuda_alloc(&p, size, nullptr);
      mate_guard_cuda_free(p, nullptr);
    }
    double us = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() / 2000 * 1e6;
    printf("tight alloc+free %zu: %.2f us\n", size, us);
  }
  if (argc > 2) {
    void (*seterr)(int) =
        (void (*)(int))dlsym(dlopen(getenv("MATE_GUARD_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD), "fake_cuda_set_error");
    r = mate_guard_cuda_alloc(&p, 4000, nullptr);
    seterr(700);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    printf("after injected 700\n");
  }
  ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  printf("done\n");
  return 0;
}
