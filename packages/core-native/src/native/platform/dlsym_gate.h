#ifndef MATE_PLATFORM_DLSYM_GATE_H_
#define MATE_PLATFORM_DLSYM_GATE_H_

// Gates for a module's dlsym and dlvsym imports: a look-up of a name that
// begins with "cu" (the CUDA driver's entry points) goes to a hook; every
// other look-up, and any with RTLD_NEXT, jumps straight to the real
// function with no frame of ours in between, so the loader still sees the
// caller's return address (RTLD_NEXT, the caller's namespace). Written in
// assembly for that reason (x86-64, aarch64). Launch tracking's import
// front-end (device/launch/driver_interpose.h) uses it: the CUDA runtime,
// cuBLAS, NCCL and Triton find the driver through dlsym.
namespace mate {
namespace platform {

// The hook: the real dlsym (version null) or dlvsym, and what it returns.
using SymbolHook = void* (*)(void* handle, const char* name, const char* version);

// Sets the hook (before any gate is patched in); false on an architecture
// without gates (nothing to patch in then).
bool SetSymbolHook(SymbolHook hook);
void* DlsymGate();
void* DlvsymGate();

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_DLSYM_GATE_H_
