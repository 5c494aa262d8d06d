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
  out->lr = static_cast<uintptr_t>(uc->uc_mcontext.regs[30]);
  return true;
#else
  (void)uc;
  (void)out;
  return false;
#endif
}

#if defined(__aarch64__)
namespace {

// The kernel's esr_context record (asm/sigcontext.h), one of the records
// in uc_mcontext.__reserved: each starts with {magic, size}, a zero magic
// ends them.
constexpr uint32_t kEsrMagic = 0x45535201;
struct RecordHead {
  uint32_t magic;
  uint32_t size;
};

bool ReadEsr(const ucontext_t* uc, uint64_t* esr) {
  const unsigned char* p = uc->uc_mcontext.__reserved;
  const unsigned char* end = p + sizeof(uc->uc_mcontext.__reserved);
  while (p + sizeof(RecordHead) <= end) {
    RecordHead head;
    memcpy(&head, p, sizeof(head));
    if (head.magic == 0 || head.size < sizeof(head) || head.size > static_cast<size_t>(end - p)) return false;
    if (head.magic == kEsrMagic && head.size >= sizeof(head) + sizeof(*esr)) {
      memcpy(esr, p + sizeof(head), sizeof(*esr));
      return true;
    }
    p += head.size;
  }
  return false;
}

// Without an ESR record (an emulator may leave it out), the faulting
// instruction says it: in the load/store group, bit 22 is L (load) for
// the pair, exclusive and register forms. Atomic read-modify-write forms
// write; anything unrecognized stays unknown.
FaultAccess DecodeLoadStore(uintptr_t pc) {
  uint32_t insn = 0;
  if (pc % 4 != 0 || !SafeRead(pc, &insn, sizeof(insn))) return FaultAccess::kUnknown;
  if ((insn & 0x0a000000) != 0x08000000) return FaultAccess::kUnknown;  // not a load or store
  const bool load = insn & (1u << 22);
  if ((insn & 0x3f000000) == 0x08000000) {  // exclusive, ordered, compare-and-swap
    const bool o1 = insn & (1u << 21);
    if (o1 && (insn & (1u << 23))) return FaultAccess::kWrite;   // CAS
    if (o1 && !(insn & (1u << 31))) return FaultAccess::kWrite;  // CASP (LDXP/STXP have bit 31 set)
    return load ? FaultAccess::kRead : FaultAccess::kWrite;
  }
  if ((insn & 0x3e000000) == 0x0c000000) return load ? FaultAccess::kRead : FaultAccess::kWrite;  // SIMD structures
  if ((insn & 0x38000000) == 0x28000000) return load ? FaultAccess::kRead : FaultAccess::kWrite;  // pairs
  if ((insn & 0x38000000) == 0x38000000) {                                                        // single register
    const bool unsigned_offset = insn & (1u << 24);
    const bool reg_form = insn & (1u << 21);
    const uint32_t low = (insn >> 10) & 3;
    const uint32_t size = insn >> 30;
    const bool simd = insn & (1u << 26);
    if (!unsigned_offset && reg_form && low == 0) return FaultAccess::kWrite;           // atomic memory op
    if (!unsigned_offset && reg_form && (low & 1) && !simd) return FaultAccess::kRead;  // LDRAA/LDRAB (pointer auth)
    const uint32_t opc = (insn >> 22) & 3;
    if (simd) return (opc & 1) ? FaultAccess::kRead : FaultAccess::kWrite;
    if (size == 3 && opc == 2) return FaultAccess::kUnknown;  // prefetch
    return opc == 0 ? FaultAccess::kWrite : FaultAccess::kRead;
  }
  return FaultAccess::kUnknown;
}

}  // namespace
#endif

FaultAccess ReadFaultAccess(const void* ucontext) {
  if (ucontext == nullptr) return FaultAccess::kUnknown;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  // Page-fault error code: bit 1 set for a write.
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? FaultAccess::kWrite : FaultAccess::kRead;
#elif defined(__aarch64__)
  // ESR_EL1: exception class 0x24/0x25 is a data abort (lower/same EL);
  // WnR (bit 6) set for a write, unless it was a cache maintenance op (CM, bit 8).
  uint64_t esr = 0;
  if (ReadEsr(uc, &esr)) {
    const uint64_t ec = (esr >> 26) & 0x3f;
    if (ec == 0x24 || ec == 0x25)
      return ((esr & (1u << 6)) && !(esr & (1u << 8))) ? FaultAccess::kWrite : FaultAccess::kRead;
  }
  return DecodeLoadStore(static_cast<uintptr_t>(uc->uc_mcontext.pc));
#else
  (void)uc;
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

bool LeafReturnAddress(const MachineRegs& regs, uintptr_t* out) {
#if defined(__x86_64__)
  uintptr_t ret = 0;
  unsigned char call[5];
  if (!SafeReadWord(regs.sp, &ret) || ret < sizeof(call) || !SafeRead(ret - sizeof(call), call, sizeof(call)))
    return false;
  if (call[0] != 0xe8) return false;  // call rel32
  int32_t rel;
  memcpy(&rel, call + 1, sizeof(rel));
  uintptr_t target = ret + static_cast<intptr_t>(rel);
  if (regs.pc < target || regs.pc - target > (1u << 16)) return false;
  *out = ret;
  return true;
#elif defined(__aarch64__)
  // A leaf keeps its return address in the link register: accepted when
  // the instruction before it is a BL to a function at most 64 KiB before pc.
  uintptr_t ret = regs.lr;
  uint32_t bl = 0;
  if (ret < 4 || ret % 4 != 0 || !SafeRead(ret - 4, &bl, sizeof(bl)) || (bl & 0xfc000000) != 0x94000000) return false;
  int64_t imm = static_cast<int64_t>(static_cast<int32_t>(bl << 6) >> 6) * 4;
  uintptr_t target = ret - 4 + imm;
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
