// Kernel cost of the at-once close with several allocating threads: each of
// 1, 2, 4 and 8 threads cycles its own share of 8,192 one-page slots (open,
// touch the allocation's bytes, close), the way a native malloc+free on a
// kept slot does, three ways:
//   mprotect: kept slots as the allocator makes them (each data page its own
//     mapping between guard mappings; close = mprotect(PROT_NONE), the page
//     stays; open = mprotect(RW)). mprotect takes the mmap lock for writing:
//     threads take turns.
//   guard markers, anonymous: close = MADV_GUARD_INSTALL (frees the page),
//     open = MADV_GUARD_REMOVE + a fault that zeroes a new page. Takes the
//     mmap lock for reading: threads run at once.
//   guard markers, memfd: the same on a shared memfd mapping, whose page
//     stays in the file while closed (the fault maps it back, no zeroing).
// Every close lowers a page's protection: its TLB flush reaches every CPU
// running one of the process's threads. No Node involved; Linux >= 6.13
// (6.15 for guard markers on a memfd).
// Build and run: cc -O2 -pthread bench/native/slot-threads.c -o /tmp/slot-threads && /tmp/slot-threads [ops per thread]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif
#define PAGE 4096
enum { SLOTS = 8192, MAX_THREADS = 8 };
enum Method { kMprotect, kGuardAnon, kGuardMemfd, kMethods };
static const char* kNames[] = {"mprotect (kept slots)", "guard markers, anonymous", "guard markers, memfd"};

static char* span;
static enum Method method;
static int threads, ops;
static pthread_barrier_t start;
static double wall_ns[MAX_THREADS], cpu_ns[MAX_THREADS];

static double ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static char* data_page(int slot) { return span + (size_t)(2 * slot + 1) * PAGE; }
static int close_slot(char* d) {
  return method == kMprotect ? mprotect(d, PAGE, PROT_NONE) : madvise(d, PAGE, MADV_GUARD_INSTALL);
}
static int open_slot(char* d) {
  return method == kMprotect ? mprotect(d, PAGE, PROT_READ | PROT_WRITE) : madvise(d, PAGE, MADV_GUARD_REMOVE);
}

static void* worker(void* arg) {
  int t = (int)(long)arg, per = SLOTS / threads;
  pthread_barrier_wait(&start);
  double c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
  for (int i = 0; i < ops; i++) {
    char* d = data_page(t * per + i % per);  // its own slots, oldest freed first
    open_slot(d);
    memset(d + PAGE - 64, 0, 64);  // a 64 B allocation at the page's end
    close_slot(d);
  }
  wall_ns[t] = (ns(CLOCK_MONOTONIC) - w0) / ops;
  cpu_ns[t] = (ns(CLOCK_THREAD_CPUTIME_ID) - c0) / ops;
  return NULL;
}

static int make_span(void) {
  size_t bytes = (size_t)(2 * SLOTS + 1) * PAGE;
  if (method == kGuardMemfd) {
    int fd = memfd_create("slots", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
    span = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
  } else {
    span = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (span == MAP_FAILED) return -1;
  for (int i = 0; i <= SLOTS; i++) {  // guard pages
    char* g = span + (size_t)i * 2 * PAGE;
    if (method == kMprotect ? mprotect(g, PAGE, PROT_NONE) || madvise(g, PAGE, MADV_DONTDUMP)
                            : madvise(g, PAGE, MADV_GUARD_INSTALL))
      return -1;
  }
  for (int i = 0; i < SLOTS; i++) {  // every slot used once, then closed
    memset(data_page(i), 0xCB, PAGE);
    if (close_slot(data_page(i)) != 0) return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  ops = argc > 1 ? atoi(argv[1]) : 50000;
  printf("%ld CPUs online, %d cycles (open, 64 B touched, close) per thread\n", sysconf(_SC_NPROCESSORS_ONLN), ops);
  printf("| method | threads | wall per cycle, one thread | CPU per cycle | all threads together: cycles per ms |\n");
  printf("|---|---|---|---|---|\n");
  for (method = 0; method < kMethods; method++) {
    if (make_span() != 0) {
      printf("| %s | - | not available here (%s) | | |\n", kNames[method], "madvise/mmap refused");
      continue;
    }
    for (threads = 1; threads <= MAX_THREADS; threads *= 2) {
      pthread_t th[MAX_THREADS];
      pthread_barrier_init(&start, NULL, threads);
      for (long t = 0; t < threads; t++) pthread_create(&th[t], NULL, worker, (void*)t);
      for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
      pthread_barrier_destroy(&start);
      double w = 0, c = 0;
      for (int t = 0; t < threads; t++) w += wall_ns[t], c += cpu_ns[t];
      w /= threads, c /= threads;
      printf("| %s | %d | %.0f ns | %.0f ns | %.0f |\n", kNames[method], threads, w, c, threads * 1e6 / w);
    }
    munmap(span, (size_t)(2 * SLOTS + 1) * PAGE);
  }
  return 0;
}
