#ifndef MATE_PLATFORM_IMPORT_PATCHER_H_
#define MATE_PLATFORM_IMPORT_PATCHER_H_

#include <cstddef>
#include <cstdint>

#include "platform/loaded_modules.h"

// Redirects one loaded object's calls to functions it imports, by rewriting
// the slots the dynamic linker filled for them (PLT/GOT entries: JUMP_SLOT,
// GLOB_DAT and absolute-address relocations). Only that object's calls
// change; every other object keeps calling the real functions.
namespace mate {
namespace platform {

struct ImportRedirect {
  const char* symbol;  // the imported name, mangled for C++ (`_Znwm`)
  void* target;        // where the object's calls go from now on
};

struct RedirectResult {
  uint32_t slots_written = 0;   // slots changed by this call
  uint32_t slots_redirected = 0;  // slots now pointing at a target (written now or before)
  uint64_t symbols = 0;         // bit i: table[i] has at least one redirected slot
  uint64_t defined = 0;         // bit i: the object defines table[i] itself (left alone)
  const char* error = nullptr;  // why the object could not be patched (nothing written)
};

// Idempotent: slots already pointing at their target are left. Slots in
// read-only pages (RELRO) are made writable for the write and read-only
// again. At most 64 table entries. x86-64 and aarch64.
RedirectResult RedirectImports(const LoadedObject& obj, const ImportRedirect* table, size_t n);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_IMPORT_PATCHER_H_
