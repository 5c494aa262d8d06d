#include "platform/linux/machine_context.h"

#include <string.h>
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
bool SafeRead(uintptr_t addr, void* out, size_t len) {
  struct iovec local = {out, len};
  struct iovec remote = {reinterpret_cast<void*>(addr), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

bool LeafReturnAddress(const MachineRegs& regs, uintptr_t* out) {
#if defined(__x86_64__)
  uintptr_t ret = 0;
  unsigned char call[5];
  if (!SafeReadWord(regs.sp, &ret) || ret < sizeof(call) || !SafeRead(ret - sizeof(call), call, sizeof(call))) return false;
  if (call[0] != 0xe8) return false;  // call rel32
  int32_t rel;
  memcpy(&rel, call + 1, sizeof(rel));
  uintptr_t target = ret + static_cast<intptr_t>(rel);
  if (regs.pc < target || regs.pc - target > (1u << 16)) return false;
  *out = ret;
  return true;
#else
  (void)regs;
  (void)out;
  return false;
#endif
}

}  // namespace mate
