#ifndef MATE_PLATFORM_NEVER_PATCHED_H_
#define MATE_PLATFORM_NEVER_PATCHED_H_

#include "platform/loaded_modules.h"

// The one list of modules whose imports mate-guard never rewrites, and why.
// Each redirection names the groups it leaves alone; mate-guard's own
// object is never patched by any (its calls are the real functions).
namespace mate {
namespace platform {

enum NeverPatch : unsigned {
  // The dynamic linker and the vDSO: the loader keeps its own allocator
  // while it runs; nothing of ours may run inside it.
  kNeverLoader = 1u << 0,
  // The C and C++ runtimes (libc, libstdc++, libc++, libgcc_s, libm, ...):
  // they implement the heap; redirecting their allocation calls would route
  // every module's memory through us.
  kNeverRuntime = 1u << 1,
  // Node itself: the executable, or libnode/libv8 in distribution builds.
  kNeverNode = 1u << 2,
  // NVIDIA's libraries: they implement the CUDA calls (cuBLAS and friends
  // keep their own workspaces), and our CUDA library is one of them.
  kNeverNvidia = 1u << 3,
};

// Whether `obj` falls in one of the groups of `never` (NeverPatch bits).
bool NeverPatched(const LoadedObject& obj, unsigned never);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_NEVER_PATCHED_H_
