#include "platform/dlsym_gate.h"

#include <dlfcn.h>

// Read by the gates below (hidden: reached PC-relative, no GOT).
extern "C" {
__attribute__((visibility("hidden"))) void* mate_gate_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) void* mate_gate_real_dlvsym = nullptr;
__attribute__((visibility("hidden"))) void* mate_gate_hook = nullptr;
void mate_dlsym_gate();
void mate_dlvsym_gate();
}

// rdi/x0 = handle, rsi/x1 = name, rdx/x2 = version (dlvsym). The dlsym
// gate clears the version before calling the hook.
#if defined(__x86_64__)
#define MATE_HAVE_GATES 1
// One gate: to `real` unless the name begins with "cu" and the handle is
// not RTLD_NEXT; `clear_version` for dlsym, whose third register is no
// argument.
asm(R"(
  .macro MATE_GATE name, real, clear_version
  .text
  .p2align 4
  .globl \name
  .hidden \name
  .type \name, @function
\name:
  cmpq $-1, %rdi
  je 1f
  testq %rsi, %rsi
  je 1f
  cmpb $0x63, (%rsi)
  jne 1f
  cmpb $0x75, 1(%rsi)
  jne 1f
  .if \clear_version
  xorl %edx, %edx
  .endif
  jmp *mate_gate_hook(%rip)
1:
  jmp *\real(%rip)
  .size \name, .-\name
  .endm
  MATE_GATE mate_dlsym_gate, mate_gate_real_dlsym, 1
  MATE_GATE mate_dlvsym_gate, mate_gate_real_dlvsym, 0
  .purgem MATE_GATE
)");
#elif defined(__aarch64__)
#define MATE_HAVE_GATES 1
// The same; `bti c` (hint 34) as the landing pad of an indirect call, and
// the jumps out through x16, which a callee's `bti c` accepts.
asm(R"(
  .macro MATE_GATE name, real, clear_version
  .text
  .p2align 4
  .globl \name
  .hidden \name
  .type \name, %function
\name:
  hint #34
  cmn x0, #1
  b.eq 1f
  cbz x1, 1f
  ldrb w16, [x1]
  cmp w16, #0x63
  b.ne 1f
  ldrb w16, [x1, #1]
  cmp w16, #0x75
  b.ne 1f
  .if \clear_version
  mov x2, xzr
  .endif
  adrp x16, mate_gate_hook
  ldr x16, [x16, :lo12:mate_gate_hook]
  br x16
1:
  adrp x16, \real
  ldr x16, [x16, :lo12:\real]
  br x16
  .size \name, .-\name
  .endm
  MATE_GATE mate_dlsym_gate, mate_gate_real_dlsym, 1
  MATE_GATE mate_dlvsym_gate, mate_gate_real_dlvsym, 0
  .purgem MATE_GATE
)");
#endif

namespace mate {
namespace platform {

#if defined(MATE_HAVE_GATES)
bool SetSymbolHook(SymbolHook hook) {
  // Our own imports: this object is never patched, so they are the real functions.
  __atomic_store_n(&mate_gate_real_dlsym, reinterpret_cast<void*>(&dlsym), __ATOMIC_RELEASE);
  __atomic_store_n(&mate_gate_real_dlvsym, reinterpret_cast<void*>(&dlvsym), __ATOMIC_RELEASE);
  __atomic_store_n(&mate_gate_hook, reinterpret_cast<void*>(hook), __ATOMIC_RELEASE);
  return true;
}
void* DlsymGate() { return reinterpret_cast<void*>(&mate_dlsym_gate); }
void* DlvsymGate() { return reinterpret_cast<void*>(&mate_dlvsym_gate); }
#else
bool SetSymbolHook(SymbolHook) { return false; }
void* DlsymGate() { return nullptr; }
void* DlvsymGate() { return nullptr; }
#endif

}  // namespace platform
}  // namespace mate
