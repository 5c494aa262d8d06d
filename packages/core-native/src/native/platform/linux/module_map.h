#ifndef MATE_PLATFORM_LINUX_MODULE_MAP_H_
#define MATE_PLATFORM_LINUX_MODULE_MAP_H_

// Which loaded ELF object a code address belongs to, answerable inside a
// signal handler.
//
// The map is built with dl_iterate_phdr outside any handler (at install,
// after each addon load, and whenever the loader's object counters moved)
// and published as an immutable snapshot behind an atomic pointer. Lookups
// read the current snapshot without locks or allocation; snapshots are
// never freed (a handler may still read one), which costs a few KiB per
// change of the loaded set.

#include <cstddef>
#include <cstdint>

namespace mate {

constexpr uint32_t kNoModule = 0xffffffffu;

// A code address resolved to its module. `offset` is pc minus the module's
// load bias (dlpi_addr): the link-time virtual address, which is what
// addr2line, llvm-symbolizer and the module's ELF symbol tables use, and
// what sanitizers print as `module+0xoffset`.
struct ModuleRef {
  uint32_t index = kNoModule;  // stable for the process's life (see ModulePath)
  uintptr_t offset = 0;        // pc when the module is unknown
  const char* path = nullptr;  // absolute path; never freed; nullptr when unknown
};

// Rebuilds the map if objects were loaded or unloaded since the last build
// (cheap check: the loader's dlpi_adds/dlpi_subs), or always with `force`.
// Thread-safe (serialized); allocates; takes the loader's lock: never call
// it from a signal handler. Returns true when a new snapshot was published.
bool RefreshModuleMap(bool force = false);

// True when objects were loaded or unloaded since the last build. Takes the
// loader's lock briefly; not for signal handlers.
bool ModuleMapStale();

// Resolves `pc` through the current snapshot; falls back to the loader's
// lock-free _dl_find_object (glibc >= 2.35) for objects loaded since the
// last refresh. Async-signal-safe: no locks, no allocation, no syscalls.
// False (and `out` left as unknown, offset = pc) when no object maps `pc`.
bool LookupModule(uintptr_t pc, ModuleRef* out);

// The module table, for event writers: indexes are assigned in order of
// first sight of (path, load bias) and never reused, so an index stays
// valid after the object is unloaded. Async-signal-safe.
uint32_t ModuleCount();
const char* ModulePath(uint32_t index);    // nullptr when out of range
uintptr_t ModuleLoadBias(uint32_t index);  // 0 when out of range

}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_MODULE_MAP_H_
