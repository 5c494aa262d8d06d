#include "platform/linux/machine_context.h"

#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

namespace mate {

bool ReadMachineRegs(const void* ucontext, MachineRegs* out) {
  if (ucontext == nullptr) return false;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  out->pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  out->sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  out->fp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP]);
  return true;
#elif defined(__aarch64__)
  out->pc = static_cast<uintptr_t>(uc->uc_mcontext.pc);
  out->sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
  out->fp = static_cast<uintptr_t>(uc->uc_mcontext.regs[29]);
  return true;
#else
  (void)uc;
  (void)out;
  return false;
#endif
}

// process_vm_readv on ourselves reports EFAULT for an unmapped address
// where a plain load would fault inside the signal handler.
bool SafeReadWord(uintptr_t addr, uintptr_t* out) {
  struct iovec local = {out, sizeof(*out)};
  struct iovec remote = {reinterpret_cast<void*>(addr), sizeof(*out)};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof(*out));
}

}  // namespace mate
