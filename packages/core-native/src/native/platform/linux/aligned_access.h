#ifndef MATE_PLATFORM_LINUX_ALIGNED_ACCESS_H_
#define MATE_PLATFORM_LINUX_ALIGNED_ACCESS_H_

// A general-protection fault (SIGSEGV with SI_KERNEL, no address) is most
// often an SSE/AVX instruction that needs an aligned memory operand given a
// misaligned one (movdqa of a block 8 bytes off a 16-byte boundary). This
// decodes the faulting instruction far enough to tell: which one, the
// address it was given and the alignment it needs. x86-64 only;
// async-signal-safe.

#include <cstddef>
#include <cstdint>

namespace mate {

struct AlignedAccess {
  const char* instruction = nullptr;  // "movdqa", "vmovaps", "an SSE instruction"
  uintptr_t address = 0;              // the memory operand's address
  uint32_t alignment = 0;             // what the instruction needs (16 or 32)
};

// `code`: the bytes at `pc` (up to 15); `regs`: the 16 general registers in
// x86 numbering (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15). True only
// for an alignment-checking instruction whose memory operand is misaligned.
bool DecodeMisalignedAccess(const uint8_t* code, size_t len, uintptr_t pc, const uintptr_t regs[16],
                            AlignedAccess* out);

// The same for a signal's context (reads the code at its pc safely).
bool MisalignedAccessAt(const void* ucontext, AlignedAccess* out);

}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_ALIGNED_ACCESS_H_
