#ifndef MATE_PLATFORM_LOADED_MODULES_H_
#define MATE_PLATFORM_LOADED_MODULES_H_

#include <cstddef>
#include <cstdint>

// The ELF objects mapped in this process, as the dynamic linker lists them
// (for patching their imports; platform/linux/module_map.h maps code
// addresses to modules for reports).
namespace mate {
namespace platform {

struct LoadedObject {
  const char* path;   // as the linker knows it; the main program's real path
  uintptr_t base;     // load bias: runtime address = base + ELF virtual address
  const void* phdrs;  // the object's program headers (ElfW(Phdr)[phnum])
  uint16_t phnum;
  bool main_program;
};

// Calls fn for every loaded object while the dynamic linker's list is held
// (fn must not load or unload objects). Stops when fn returns false.
void ForEachLoadedObject(bool (*fn)(const LoadedObject& obj, void* ctx), void* ctx);

// Grows whenever an object is loaded or unloaded; one cheap linker call.
uint64_t LoadGeneration();

// The address range of the loaded segments of the object holding `addr`
// (e.g. one of our own functions). False when no object holds it.
bool ObjectRange(const void* addr, uintptr_t* start, uintptr_t* end);
// The same for the main program (the executable).
bool MainProgramRange(uintptr_t* start, uintptr_t* end);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_LOADED_MODULES_H_
