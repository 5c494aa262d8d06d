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

FaultAccess ReadFaultAccess(const void* ucontext) {
#if defined(__x86_64__)
  if (ucontext == nullptr) return FaultAccess::kUnknown;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
  // Page-fault error code: bit 1 set for a write.
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? FaultAccess::kWrite : FaultAccess::kRead;
#else
  (void)ucontext;
  return FaultAccess::kUnknown;
#endif
}

size_t ReadGeneralRegisters(const void* ucontext, uintptr_t* out, size_t max) {
  if (ucontext == nullptr) return 0;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  static const int kRegs[] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_R8,
                              REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  size_t n = 0;
  for (int r : kRegs) {
    if (n == max) break;
    out[n++] = static_cast<uintptr_t>(uc->uc_mcontext.gregs[r]);
  }
  return n;
#elif defined(__aarch64__)
  size_t n = 0;
  for (int r = 0; r < 31 && n < max; r++) out[n++] = static_cast<uintptr_t>(uc->uc_mcontext.regs[r]);
  return n;
#else
  (void)uc;
  (void)out;
  (void)max;
  return 0;
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
