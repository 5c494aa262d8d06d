#include "platform/guard_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif

namespace mate {
namespace platform {

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* ReserveRegion(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool HasGuardInstall() {
  static const bool has = [] {
    size_t page = PageSize();
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    bool ok = madvise(p, page, MADV_GUARD_INSTALL) == 0;
    munmap(p, page);
    return ok;
  }();
  return has;
}

bool CommitChunk(void* addr, size_t bytes) {
  return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
}

bool InstallGuard(void* addr, size_t bytes) {
  return bytes == 0 || madvise(addr, bytes, MADV_GUARD_INSTALL) == 0;
}

bool RemoveGuard(void* addr, size_t bytes) {
  return bytes == 0 || madvise(addr, bytes, MADV_GUARD_REMOVE) == 0;
}

bool ProtectNone(void* addr, size_t bytes) {
  if (bytes == 0) return true;
  if (mprotect(addr, bytes, PROT_NONE) != 0) return false;
  return madvise(addr, bytes, MADV_DONTNEED) == 0;
}

bool ProtectReadWrite(void* addr, size_t bytes) {
  return bytes == 0 || mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
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
