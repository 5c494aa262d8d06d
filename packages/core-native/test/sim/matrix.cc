// The cross-stream-free matrix and launch attribution over the simulated
// driver and CUPTI (see README.md): each scenario allocates on stream A,
// a fake kernel uses it on stream B, the free happens on A.
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_kernel.h"
#include "mate_guard.h"

using EvRec = int (*)(void*, void*);
using Wait = int (*)(void*, void*);
using Sync = int (*)();
using SetErr = void (*)(int);
using Wait3 = int (*)(void*, void*, unsigned);
using DriverLaunch = int (*)(FakeFunc*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**);
using GetProc = int (*)(const char*, void**, int, unsigned long long, int*);
#ifdef MATRIX_LINKED
// Built linked against the simulated driver (-lcuda's way): its functions
// are this program's imports (MATRIX_VIA=link).
extern "C" {
int cuLaunchKernel(FakeFunc*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                   void**);
int cuEventRecord(void*, void*);
int cuStreamWaitEvent(void*, void*, unsigned);
int cuCtxSynchronize();
int cuStreamCreate(void**, unsigned);
}
#endif

int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* fake = dlopen(getenv("MATE_GUARD_CUDA_DRIVER"), RTLD_NOW);
  if (!lib || !fake) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  if (((int (*)())dlsym(lib, "mate_guard_install_from_env"))() != 0) {
    printf("install: %s\n", ((const char* (*)())dlsym(lib, "mate_guard_install_error"))());
    return 1;
  }
  FakeLaunch launch = (FakeLaunch)dlsym(fake, "fake_launch");
  auto record = (EvRec)dlsym(fake, "fake_event_record");
  auto wait = (Wait)dlsym(fake, "fake_stream_wait");
  auto sync = (Sync)dlsym(fake, "fake_ctx_sync");
  auto create = (FakeStreamCreate)dlsym(fake, "fake_stream_create");
  // MATRIX_VIA=driver: the program finds the driver's functions as the
  // CUDA runtime does, dlsym for cuGetProcAddress_v2 and that for the rest
  // (what launch tracking's import front-end hands wrappers out for).
  static DriverLaunch s_launch = nullptr;  // what the captureless lambdas below call
  static Wait3 s_wait = nullptr;
  const char* via = getenv("MATRIX_VIA");
  if (via && strcmp(via, "driver") == 0) {
    auto get = (GetProc)dlsym(fake, "cuGetProcAddress_v2");
    void* fn[5] = {};
    const char* names[5] = {"cuLaunchKernel", "cuEventRecord", "cuStreamWaitEvent", "cuCtxSynchronize",
                            "cuStreamCreate"};
    for (int i = 0; i < 5; i++)
      if (!get || get(names[i], &fn[i], 12000, 0, nullptr) != 0) {
        printf("cuGetProcAddress_v2 has no %s\n", names[i]);
        return 1;
      }
    s_launch = (DriverLaunch)fn[0];
    launch = [](FakeFunc* f, void* stream, void** params) {
      return s_launch(f, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
    };
    record = (EvRec)fn[1];
    s_wait = (Wait3)fn[2];
    wait = [](void* stream, void* ev) { return s_wait(stream, ev, 0); };
    sync = (Sync)fn[3];
    create = (FakeStreamCreate)fn[4];
  }
#ifdef MATRIX_LINKED
  if (via && strcmp(via, "link") == 0) {
    launch = [](FakeFunc* f, void* stream, void** params) {
      return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
    };
    record = [](void* ev, void* stream) { return cuEventRecord(ev, stream); };
    wait = [](void* stream, void* ev) { return cuStreamWaitEvent(stream, ev, 0); };
    sync = [] { return cuCtxSynchronize(); };
    create = [](void** s, unsigned flags) { return cuStreamCreate(s, flags); };
  }
#endif
  static FakeFunc use_kernel{"_ZN12_GLOBAL__N_19UseBufferEPfl", 2, {8, 8}};
  void *A, *B, *C;
  create(&A, 1);
  create(&B, 1);
  create(&C, 1);
  int ev1 = 0, ev2 = 0;
  void* e1 = &ev1;
  void* e2 = &ev2;
  const char* which = argc > 2 ? argv[2] : "all";
  auto scenario = [&](const char* name, int kind) {
    if (strcmp(which, "all") != 0 && strcmp(which, name) != 0) return;
    void* p = nullptr;
    mate_guard_cuda_alloc(&p, 4000, A);
    long n = 1000;
    void* params[2] = {&p, &n};
    if (kind == 2 || kind == 4) {
      record(e1, A);
      wait(B, e1);
    }  // user waits on creation
    launch(&use_kernel, B, params);
    if (kind == 7) launch(&use_kernel, C, params);
    if (kind == 3 || kind == 4) {
      record(e2, B);
      wait(A, e2);
    }  // creation waits on user
    if (kind == 5) sync();
    if (kind == 6) mate_guard_record_stream(p, B);
    if (kind == 8) {
      mate_guard_cuda_free(p, B);
      printf("%s: freed\n", name);
      return;
    }  // same stream
    mate_guard_cuda_free(p, A);
    printf("%s: freed\n", name);
  };
  scenario("no-sync", 1);                 // reported
  scenario("user-waits-on-creation", 2);  // reported
  scenario("creation-waits-on-user", 3);  // not
  scenario("both-directions", 4);         // not
  scenario("device-synchronize", 5);      // not
  scenario("record-stream", 6);           // not
  scenario("two-user-streams", 7);        // two reports
  scenario("same-stream", 8);             // not
  if (strcmp(which, "fault") == 0 || strcmp(which, "fault-blocking") == 0 || strcmp(which, "assert") == 0) {
    bool blocking = strcmp(which, "fault-blocking") == 0;
    // "assert": the kernel's device-side assert (CUDA_ERROR_ASSERT), not an illegal address.
    int error = strcmp(which, "assert") == 0 ? 710 : 700;
    void *p = nullptr, *q = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    mate_guard_cuda_alloc(&q, 64, nullptr);
    memset(p, 0x5a, 4000);  // what a dump of FillInclusive's input must hold (dumpInputs)
    long n = 1000;
    void* params[2] = {&p, &n};
    static FakeFunc fill{"_ZN12_GLOBAL__N_113FillInclusiveEPfl", 2, {8, 8}};
    static FakeFunc other{"other_kernel", 2, {8, 8}};
    void* qp[2] = {&q, &n};
    launch(&other, nullptr, qp);
    // Launch blocking synchronizes after each launch: the fault shows at the kernel's own.
    if (blocking) ((SetErr)dlsym(fake, "fake_cuda_set_error"))(error);
    launch(&fill, nullptr, params);
    ((SetErr)dlsym(fake, "fake_cuda_set_error"))(error);
    int r = sync();
    printf("fault: sync returned %d\n", r);
  }
  if (strcmp(which, "many-pointers") == 0) {
    // One launch on B whose by-value struct holds 40 guarded pointers, more
    // than the tracker notes in one batch: each is a use on B. The 40th
    // freed on A with nothing ordering it is a cross-stream free; the
    // rest, freed after a synchronize, are not.
    constexpr int kN = 40;
    void* ptrs[kN];
    for (int i = 0; i < kN; i++) mate_guard_cuda_alloc(&ptrs[i], 256, A);
    static FakeFunc many{"_ZN12_GLOBAL__N_112ManyPointersE4Many", 1, {kN * sizeof(void*)}};
    void* params[1] = {ptrs};
    launch(&many, B, params);
    mate_guard_cuda_free(ptrs[kN - 1], A);
    printf("many-pointers: freed the last\n");
    sync();
    for (int i = 0; i < kN - 1; i++) mate_guard_cuda_free(ptrs[i], A);
    printf("many-pointers: freed the rest\n");
  }
  if (strcmp(which, "wrap") == 0) {
    // The launch log is a ring of 4096 entries: launch 4097 takes launch
    // 1's. Launch 1 passed three guarded pointers, launch 4097 (the one in
    // flight at the fault) passes one: its report lists that one alone.
    void *p = nullptr, *q = nullptr, *r = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    mate_guard_cuda_alloc(&q, 4000, nullptr);
    mate_guard_cuda_alloc(&r, 4000, nullptr);
    long n = 1000;
    static FakeFunc three{"three_pointers", 3, {8, 8, 8}};
    static FakeFunc none{"no_pointers", 1, {8}};
    static FakeFunc fill{"_ZN12_GLOBAL__N_113FillInclusiveEPfl", 2, {8, 8}};
    void* pqr[3] = {&p, &q, &r};
    void* np[1] = {&n};
    void* rn[2] = {&r, &n};
    launch(&three, nullptr, pqr);
    for (int i = 0; i < 4095; i++) launch(&none, nullptr, np);
    sync();  // all 4096 finished
    launch(&fill, nullptr, rn);
    ((SetErr)dlsym(fake, "fake_cuda_set_error"))(700);
    printf("wrap: sync returned %d\n", sync());
  }
  if (strcmp(which, "kernel-fault") == 0) {
    // Two launches in flight, one of which faults (FAKE_CUDA_FAULT_KERNEL=FillInclusive):
    // the program's synchronize sees it, and without launch blocking names both.
    void *p = nullptr, *q = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    mate_guard_cuda_alloc(&q, 64, nullptr);
    long n = 1000;
    void* params[2] = {&p, &n};
    void* qp[2] = {&q, &n};
    static FakeFunc fill{"_ZN12_GLOBAL__N_113FillInclusiveEPfl", 2, {8, 8}};
    static FakeFunc other{"other_kernel", 2, {8, 8}};
    launch(&fill, nullptr, params);
    launch(&other, nullptr, qp);
    printf("kernel-fault: sync returned %d\n", sync());
  }
  if (strcmp(which, "dump-cap") == 0) {
    // dumpInputs' per-allocation cap: a 17 MiB input is saved truncated to 16 MiB.
    void* big = nullptr;
    mate_guard_cuda_alloc(&big, 17u << 20, nullptr);
    long n = 17l << 18;
    void* params[2] = {&big, &n};
    static FakeFunc fill{"_ZN12_GLOBAL__N_113FillInclusiveEPfl", 2, {8, 8}};
    launch(&fill, nullptr, params);
    printf("dump-cap: launched\n");
  }
  if (strcmp(which, "paced") == 0) {
    // Twelve launches 30 ms apart (MATE_GUARD_TRACK_ALTERNATE_MS: some fall
    // in recorded periods, some not).
    void* p = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    long n = 1000;
    void* params[2] = {&p, &n};
    static FakeFunc paced{"paced_kernel", 2, {8, 8}};
    for (int i = 0; i < 12; i++) {
      launch(&paced, nullptr, params);
      timespec gap{0, 30 * 1000 * 1000};
      nanosleep(&gap, nullptr);
    }
    mate_guard_cuda_free(p, nullptr);
    printf("paced: launched\n");
  }
  if (strncmp(which, "alternate-", 10) == 0) {
    // MATE_GUARD_TRACK_ALTERNATE_MS=<P>,all: a launch on B in a tracked
    // (even) period uses memory of A; in the odd period after it, whose
    // calls the guard drops, "ordered": B's event waited by A, "unrelated":
    // an event recorded on C, "unordered": nothing; the free on A in the
    // next even period. Each call 5 ms into its period.
    const char* alternate = getenv("MATE_GUARD_TRACK_ALTERNATE_MS");
    long period_ms = atol(alternate ? alternate : "50");
    auto at_phase = [period_ms](int parity) {
      const long long period = period_ms * 1000000ll;
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      long long t = now.tv_sec * 1000000000ll + now.tv_nsec;
      long long k = t / period + 1;
      if (k % 2 != parity) k++;
      long long until = k * period + 5000000ll;
      timespec at{static_cast<time_t>(until / 1000000000ll), static_cast<long>(until % 1000000000ll)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    };
    void* p = nullptr;
    mate_guard_cuda_alloc(&p, 4000, A);
    long n = 1000;
    void* params[2] = {&p, &n};
    at_phase(0);
    launch(&use_kernel, B, params);
    at_phase(1);
    if (strcmp(which, "alternate-ordered") == 0) {
      record(e2, B);
      wait(A, e2);
    }
    if (strcmp(which, "alternate-unrelated") == 0) record(e1, C);
    at_phase(0);
    mate_guard_cuda_free(p, A);
    printf("%s: freed\n", which);
  }
  if (strcmp(which, "oom") == 0) {
    // Allocate 1 GiB blocks until the device (FAKE_CUDA_MEMORY_BYTES) runs
    // out: the failure must come back at once, with the guard's numbers;
    // after freeing, allocations work again.
    void* blocks[64];
    int n = 0, r = 0;
    // One byte more than 1 GiB: each holds 513 granules of 2 MiB (the guard's overhead).
    while (n < 64 && (r = mate_guard_cuda_alloc(&blocks[n], (1ull << 30) + 1, nullptr)) == 0) n++;
    printf("oom: %d allocations of 1 GiB, then error %d: %s\n", n, r, mate_guard_last_error());
    r = mate_guard_cuda_alloc(&blocks[n], (1ull << 30) + 1, nullptr);
    printf("oom: again, error %d\n", r);
    for (int i = 0; i < n; i++) mate_guard_cuda_free(blocks[i], nullptr);
    r = mate_guard_cuda_alloc(&blocks[0], 1ull << 30, nullptr);
    printf("oom: after freeing, error %d\n", r);
    if (r == 0) mate_guard_cuda_free(blocks[0], nullptr);
  }
  if (strcmp(which, "thread-names") == 0) {
    // The process's threads by name, once the device allocator runs.
    void* p = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    printf("threads:");
    if (DIR* d = opendir("/proc/self/task")) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char path[64], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        if (FILE* f = fopen(path, "r")) {
          if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = 0;
          fclose(f);
        }
        printf(" %s", name);
      }
      closedir(d);
    }
    printf("\n");
    mate_guard_cuda_free(p, nullptr);
  }
  if (strcmp(which, "killed") == 0) {
    // Killed after guarding (a time limit's SIGKILL): no counters at exit.
    void* p = nullptr;
    mate_guard_cuda_alloc(&p, 4000, nullptr);
    fflush(stdout);
    raise(SIGKILL);
  }
  ((void (*)())dlsym(lib, "mate_guard_shutdown"))();
  return 0;
}
