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
asm(R"(
  .text
  .p2align 4
  .globl mate_dlsym_gate
  .hidden mate_dlsym_gate
  .type mate_dlsym_gate, @function
mate_dlsym_gate:
  cmpq $-1, %rdi
  je 1f
  testq %rsi, %rsi
  je 1f
  cmpb $0x63, (%rsi)
  jne 1f
  cmpb $0x75, 1(%rsi)
  jne 1f
  xorl %edx, %edx
  jmp *mate_gate_hook(%rip)
1:
  jmp *mate_gate_real_dlsym(%rip)
  .size mate_dlsym_gate, .-mate_dlsym_gate

  .p2align 4
  .globl mate_dlvsym_gate
  .hidden mate_dlvsym_gate
  .type mate_dlvsym_gate, @function
mate_dlvsym_gate:
  cmpq $-1, %rdi
  je 1f
  testq %rsi, %rsi
  je 1f
  cmpb $0x63, (%rsi)
  jne 1f
  cmpb $0x75, 1(%rsi)
  jne 1f
  jmp *mate_gate_hook(%rip)
1:
  jmp *mate_gate_real_dlvsym(%rip)
  .size mate_dlvsym_gate, .-mate_dlvsym_gate
)");
#elif defined(__aarch64__)
#define MATE_HAVE_GATES 1
// `bti c` (hint 34) as the landing pad of an indirect call; the jumps out
// go through x16, which a callee's `bti c` accepts.
asm(R"(
  .text
  .p2align 4
  .globl mate_dlsym_gate
  .hidden mate_dlsym_gate
  .type mate_dlsym_gate, %function
mate_dlsym_gate:
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
  mov x2, xzr
  adrp x16, mate_gate_hook
  ldr x16, [x16, :lo12:mate_gate_hook]
  br x16
1:
  adrp x16, mate_gate_real_dlsym
  ldr x16, [x16, :lo12:mate_gate_real_dlsym]
  br x16
  .size mate_dlsym_gate, .-mate_dlsym_gate

  .p2align 4
  .globl mate_dlvsym_gate
  .hidden mate_dlvsym_gate
  .type mate_dlvsym_gate, %function
mate_dlvsym_gate:
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
  adrp x16, mate_gate_hook
  ldr x16, [x16, :lo12:mate_gate_hook]
  br x16
1:
  adrp x16, mate_gate_real_dlvsym
  ldr x16, [x16, :lo12:mate_gate_real_dlvsym]
  br x16
  .size mate_dlvsym_gate, .-mate_dlvsym_gate
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
