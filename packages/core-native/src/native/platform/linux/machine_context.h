#ifndef MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_
#define MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_

// The registers a backtrace starts from, read from a signal handler's
// ucontext, and a memory read that fails instead of faulting. Both
// async-signal-safe.

#include <cstddef>
#include <cstdint>

namespace mate {

struct MachineRegs {
  uintptr_t pc = 0;  // the faulting instruction
  uintptr_t sp = 0;
  uintptr_t fp = 0;  // frame pointer register (meaningful only if the code keeps one)
  uintptr_t lr = 0;  // link register (arm64; 0 elsewhere)
};

// False on architectures this build does not know.
bool ReadMachineRegs(const void* ucontext, MachineRegs* out);

// How a page fault touched memory: x86-64's page-fault error code; on
// arm64 ESR_EL1's WnR bit from the signal frame's esr_context, else the
// faulting load/store instruction; unknown elsewhere and for other signals.
enum class FaultAccess : uint8_t { kUnknown, kRead, kWrite };
FaultAccess ReadFaultAccess(const void* ucontext);

// The general-purpose registers of the context (values a crash may have
// left a pointer in), at most `max`; 0 on architectures this build does not know.
size_t ReadGeneralRegisters(const void* ucontext, uintptr_t* out, size_t max);

// Reads this process's memory; false (no fault) when unmapped.
bool SafeRead(uintptr_t addr, void* out, size_t len);
inline bool SafeReadWord(uintptr_t addr, uintptr_t* out) { return SafeRead(addr, out, sizeof(*out)); }

// For a fault in a leaf function that keeps no frame (its caller's return
// address still at the stack pointer), that return address. Accepted only
// if the instruction before it is a direct call to a function starting at
// most 64 KiB before the faulting pc. On arm64 the same from the link
// register and the BL before it; false elsewhere.
bool LeafReturnAddress(const MachineRegs& regs, uintptr_t* out);

}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_
