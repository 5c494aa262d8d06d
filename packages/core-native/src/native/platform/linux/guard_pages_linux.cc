#include "platform/guard_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>

#include "platform/linux/machine_context.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace mate {
namespace platform {

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* ReserveRegion(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool HasGuardInstall() {
  static const bool has = [] {
    size_t page = PageSize();
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    // Accepted is not enough: an emulator or sandbox may take unknown
    // advice and do nothing. The marked page must refuse a read that a
    // plain page allows (SafeRead fails where a load would fault).
    static_cast<volatile char*>(p)[0] = 1;
    char byte = 0;
    bool ok = SafeRead(reinterpret_cast<uintptr_t>(p), &byte, 1) && byte == 1 &&
              madvise(p, page, MADV_GUARD_INSTALL) == 0 && !SafeRead(reinterpret_cast<uintptr_t>(p), &byte, 1);
    munmap(p, page);
    return ok;
  }();
  return has;
}

bool CommitChunk(void* addr, size_t bytes) { return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0; }

bool InstallGuard(void* addr, size_t bytes) { return bytes == 0 || madvise(addr, bytes, MADV_GUARD_INSTALL) == 0; }

bool RemoveGuard(void* addr, size_t bytes) { return bytes == 0 || madvise(addr, bytes, MADV_GUARD_REMOVE) == 0; }

namespace {
constexpr size_t kMaxIov = 512;  // below IOV_MAX (1024)

// A pidfd of this process when process_madvise accepts guard advice here
// (Linux 6.13+ takes any advice for the calling process), else -1.
int SelfPidfdForGuards() {
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  static const int fd = [] {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
    if (pidfd < 0) return -1;
    size_t page = PageSize();
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool ok = false;
    if (p != MAP_FAILED) {
      struct iovec iov = {p, page};
      ok = syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_GUARD_INSTALL, 0) == static_cast<long>(page) &&
           syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_GUARD_REMOVE, 0) == static_cast<long>(page);
      munmap(p, page);
    }
    if (!ok) {
      close(pidfd);
      return -1;
    }
    return pidfd;
  }();
  return fd;
#else
  return -1;
#endif
}

bool AdviseAll(const PageRange* ranges, size_t n, int advice) {
  int pidfd = SelfPidfdForGuards();
  if (pidfd < 0 || n == 1) {
    for (size_t i = 0; i < n; i++)
      if (ranges[i].bytes && madvise(ranges[i].addr, ranges[i].bytes, advice) != 0) return false;
    return true;
  }
  struct iovec iov[kMaxIov];
  for (size_t done = 0; done < n;) {
    size_t k = 0, want = 0;
    for (; k < kMaxIov && done + k < n; k++) {
      iov[k].iov_base = ranges[done + k].addr;
      iov[k].iov_len = ranges[done + k].bytes;
      want += ranges[done + k].bytes;
    }
    // A short count means the kernel stopped at a range: finish one by one.
    long got = syscall(SYS_process_madvise, pidfd, iov, k, advice, 0);
    if (got != static_cast<long>(want)) {
      for (size_t i = 0; i < k; i++)
        if (iov[i].iov_len && madvise(iov[i].iov_base, iov[i].iov_len, advice) != 0) return false;
    }
    done += k;
  }
  return true;
}
}  // namespace

bool InstallGuards(const PageRange* ranges, size_t n) { return AdviseAll(ranges, n, MADV_GUARD_INSTALL); }
bool RemoveGuards(const PageRange* ranges, size_t n) { return AdviseAll(ranges, n, MADV_GUARD_REMOVE); }
// One system call for a batch instead of an exception per page (measured
// on the 2-core VM: 0.6-0.8 us a page against 1.0-1.2 us for a first touch).
bool PopulateWrite(const PageRange* ranges, size_t n) { return AdviseAll(ranges, n, MADV_POPULATE_WRITE); }

bool ProtectNone(void* addr, size_t bytes) {
  if (bytes == 0) return true;
  if (mprotect(addr, bytes, PROT_NONE) != 0) return false;
  return madvise(addr, bytes, MADV_DONTNEED) == 0;
}

bool ProtectReadWrite(void* addr, size_t bytes) {
  return bytes == 0 || mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
}

bool ProtectNoneKeep(void* addr, size_t bytes) { return bytes == 0 || mprotect(addr, bytes, PROT_NONE) == 0; }

bool MarkGuardMapping(void* addr, size_t bytes) {
  return mprotect(addr, bytes, PROT_NONE) == 0 && madvise(addr, bytes, MADV_DONTDUMP) == 0;
}

uint64_t MaxMapCount() {
  int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 65530;
  char buf[32] = {0};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 65530;
  return strtoull(buf, nullptr, 10);
}

}  // namespace platform
}  // namespace mate
