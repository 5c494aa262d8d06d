#ifndef MATE_PLATFORM_LINUX_CFI_RULES_H_
#define MATE_PLATFORM_LINUX_CFI_RULES_H_

#include <cstdint>

// x86-64 only: the unwind rule of one code address, read once from the
// module's .eh_frame (found through libgcc's _Unwind_Find_FDE) and then
// kept, so that a stack is walked with a table lookup and two loads per
// frame instead of libgcc interpreting the CFI of every frame every time.
namespace mate {
namespace platform {

struct CfiRule {
  enum Kind : uint8_t {
    kNone = 0,    // end of the stack: no FDE (or code without unwind tables: JIT), or the
                  // return address marked undefined (a thread's first frame)
    kSimple = 1,  // CFA = rsp|rbp + offset, return address at CFA-8
    kComplex = 2  // anything else (expressions, signal frames): libgcc must walk it
  };
  Kind kind = kNone;
  bool cfa_is_rbp = false;  // CFA relative to rbp (else rsp)
  bool rbp_saved = false;   // the caller's rbp is at CFA + rbp_offset
  int32_t cfa_offset = 0;
  int32_t rbp_offset = 0;
};

// The rule at `pc` (for a return address, pass the address minus one: the
// call instruction's). Not async-signal-safe (libgcc may take its lock).
CfiRule ReadCfiRule(uintptr_t pc);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_CFI_RULES_H_
