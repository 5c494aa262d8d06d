#ifndef MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_
#define MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_

// The registers a backtrace starts from, read from a signal handler's
// ucontext, and a memory read that fails instead of faulting. Both
// async-signal-safe.

#include <cstdint>

namespace mate {

struct MachineRegs {
  uintptr_t pc = 0;  // the faulting instruction
  uintptr_t sp = 0;
  uintptr_t fp = 0;  // frame pointer register (meaningful only if the code keeps one)
};

// False on architectures this build does not know.
bool ReadMachineRegs(const void* ucontext, MachineRegs* out);

// Reads one word of this process's memory; false (no fault) when unmapped.
bool SafeReadWord(uintptr_t addr, uintptr_t* out);

}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_MACHINE_CONTEXT_H_
