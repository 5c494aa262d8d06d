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
  // Set: only slots bound to one of `expect` (the process's real function:
  // its canonical address, which a non-PIE executable's PLT stub may be,
  // and where a call binds) or not bound yet (a lazy PLT entry) are
  // rewritten, also where the object defines the symbol itself (libc's own
  // calls to free). A slot bound anywhere else (a module's own allocator)
  // is left alone.
  void* expect[2] = {nullptr, nullptr};
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

// The function calls to `symbol` reach: where the executable's own call
// is bound, else the default lookup. Not `&symbol`: a non-PIE executable
// (node) makes its PLT stub the canonical address, so code calling through
// the address would come back through the executable's slot.
void* CallTarget(const char* symbol);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_IMPORT_PATCHER_H_
