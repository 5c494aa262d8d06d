// Kernel cost of one guarded slot cycle (open, first touch, canary fill,
// close), per page, done the way the allocator did it before and the ways it
// does now (guard markers for JS buffers and larger slots, kept slots for
// native one-page allocations). Linux >= 6.13 (MADV_GUARD_INSTALL); no Node involved.
// Build and run: cc -O2 bench/native/slot-cycle.c -o /tmp/slot-cycle && /tmp/slot-cycle
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PAGE 4096
#define SLOTS 20480  // one data page + one guard page each
#define BATCH 256

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int pidfd;
static long vector_advice(struct iovec* iov, int n, int advice) {
  return syscall(SYS_process_madvise, pidfd, iov, n, advice, 0);
}

int main(void) {
  pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  size_t bytes = (size_t)SLOTS * 2 * PAGE;
  char* base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED || madvise(base, bytes, MADV_GUARD_INSTALL) != 0) {
    perror("MADV_GUARD_INSTALL");
    return 1;
  }
  static struct iovec iov[BATCH];
  for (int i = 0; i < 4; i++) iov[i] = (struct iovec){base + (size_t)i * 2 * PAGE, PAGE};
  printf("process_madvise(self, 4 ranges): GUARD_REMOVE %s, GUARD_INSTALL %s\n",
         vector_advice(iov, 4, MADV_GUARD_REMOVE) == 4 * PAGE ? "accepted" : "refused",
         vector_advice(iov, 4, MADV_GUARD_INSTALL) == 4 * PAGE ? "accepted" : "refused");
  for (int rep = 0; rep < 3; rep++) {
    // Before: per slot, remove the guard, touch + fill, put the guard back.
    double t0 = now_ns();
    for (int i = 0; i < SLOTS; i++) {
      char* d = base + (size_t)i * 2 * PAGE;
      madvise(d, PAGE, MADV_GUARD_REMOVE);
      memset(d, 0xCB, PAGE - 16);
      madvise(d, PAGE, MADV_GUARD_INSTALL);
    }
    double per_slot = (now_ns() - t0) / SLOTS;
    // Now: open BATCH slots in one process_madvise, touch + fill, close the
    // neighbours as one range (their guard pages are guards already).
    double open = 0, touch = 0, close = 0;
    for (int i = 0; i < SLOTS; i += BATCH) {
      double a = now_ns();
      for (int j = 0; j < BATCH; j++) iov[j] = (struct iovec){base + (size_t)(i + j) * 2 * PAGE, PAGE};
      vector_advice(iov, BATCH, MADV_GUARD_REMOVE);
      double b = now_ns();
      for (int j = 0; j < BATCH; j++) memset(iov[j].iov_base, 0xCB, PAGE - 16);
      double c = now_ns();
      madvise(base + (size_t)i * 2 * PAGE, (size_t)BATCH * 2 * PAGE, MADV_GUARD_INSTALL);
      close += now_ns() - c;
      open += b - a;
      touch += c - b;
    }
    // The same close, one process_madvise with a range per slot (slots that
    // are not neighbours).
    double close_vec = 0;
    for (int i = 0; i < SLOTS; i += BATCH) {
      for (int j = 0; j < BATCH; j++) iov[j] = (struct iovec){base + (size_t)(i + j) * 2 * PAGE, PAGE};
      vector_advice(iov, BATCH, MADV_GUARD_REMOVE);
      for (int j = 0; j < BATCH; j++) ((char*)iov[j].iov_base)[0] = 1;
      double a = now_ns();
      vector_advice(iov, BATCH, MADV_GUARD_INSTALL);
      close_vec += now_ns() - a;
    }
    // A close at once, as a native free does: one madvise per freed slot.
    double close_one = 0;
    for (int i = 0; i < SLOTS; i += BATCH) {
      for (int j = 0; j < BATCH; j++) iov[j] = (struct iovec){base + (size_t)(i + j) * 2 * PAGE, PAGE};
      vector_advice(iov, BATCH, MADV_GUARD_REMOVE);
      for (int j = 0; j < BATCH; j++) ((char*)iov[j].iov_base)[0] = 1;
      double a = now_ns();
      for (int j = 0; j < BATCH; j++) madvise(iov[j].iov_base, PAGE, MADV_GUARD_INSTALL);
      close_one += now_ns() - a;
    }
    printf(
        "per slot: before %.0f ns | batched: open %.0f + first touch and fill %.0f + close %.0f = %.0f ns"
        " (close as separate ranges: %.0f ns; closed at once, one madvise each: %.0f ns)\n",
        per_slot, open / SLOTS, touch / SLOTS, close / SLOTS, (open + touch + close) / SLOTS, close_vec / SLOTS,
        close_one / SLOTS);
  }
  // Kept slots (native one-page allocations): each data page its own
  // mapping between guard mappings (PROT_NONE + MADV_DONTDUMP, so a closed
  // data page merges with nothing); close = mprotect(PROT_NONE), the page
  // stays; open = mprotect(RW), no fault.
  enum { KEPT = 4096 };
  char* kept = mmap(NULL, (size_t)(2 * KEPT + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (int i = 0; i <= KEPT; i++) {
    mprotect(kept + (size_t)i * 2 * PAGE, PAGE, PROT_NONE);
    madvise(kept + (size_t)i * 2 * PAGE, PAGE, MADV_DONTDUMP);
  }
  for (int i = 0; i < KEPT; i++) memset(kept + (size_t)(2 * i + 1) * PAGE, 0xCB, PAGE);
  for (int rep = 0; rep < 3; rep++) {
    double close = 0, open = 0;
    for (int i = 0; i < KEPT; i++) {
      char* d = kept + (size_t)(2 * i + 1) * PAGE;
      double a = now_ns();
      mprotect(d, PAGE, PROT_NONE);
      double b = now_ns();
      mprotect(d, PAGE, PROT_READ | PROT_WRITE);
      d[0] = 1;
      open += now_ns() - b;
      close += b - a;
    }
    printf("kept slot: close %.0f + open %.0f = %.0f ns\n", close / KEPT, open / KEPT, (close + open) / KEPT);
  }
  return 0;
}
