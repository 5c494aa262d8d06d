// SafeRead (machine_context.h): reads this process's memory without
// faulting. In the core library: the allocator's guard probe uses it too.
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

#include "platform/linux/machine_context.h"

namespace mate {

namespace {

// Set once process_vm_readv is found missing (qemu's user-mode emulation
// lacks it) or refused (a seccomp profile): the pipe fallback serves then.
std::atomic<bool> g_no_vm_readv{false};

// write() from an unreadable address fails with EFAULT instead of faulting.
// A fresh pipe each call: async-signal-safe, and no other thread's bytes.
bool ReadThroughPipe(uintptr_t addr, void* out, size_t len) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  bool ok = true;
  for (size_t done = 0; ok && done < len;) {
    size_t chunk = len - done < 4096 ? len - done : 4096;  // within the pipe's capacity
    ok = write(fds[1], reinterpret_cast<const void*>(addr + done), chunk) == static_cast<ssize_t>(chunk) &&
         read(fds[0], static_cast<char*>(out) + done, chunk) == static_cast<ssize_t>(chunk);
    done += chunk;
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}

}  // namespace

// process_vm_readv on ourselves reports EFAULT for an unmapped address
// where a plain load would fault inside the signal handler.
bool SafeRead(uintptr_t addr, void* out, size_t len) {
  if (!g_no_vm_readv.load(std::memory_order_relaxed)) {
    struct iovec local = {out, len};
    struct iovec remote = {reinterpret_cast<void*>(addr), len};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len)) return true;
    if (errno != ENOSYS && errno != EPERM) return false;
    g_no_vm_readv.store(true, std::memory_order_relaxed);
  }
  return ReadThroughPipe(addr, out, len);
}

}  // namespace mate
