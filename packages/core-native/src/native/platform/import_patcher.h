#ifndef MATE_PLATFORM_IMPORT_PATCHER_H_
#define MATE_PLATFORM_IMPORT_PATCHER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/loaded_modules.h"

// Redirects one loaded object's calls to functions it imports, by rewriting
// the slots the dynamic linker filled for them. Two kinds of slot:
// - import slots (PLT/GOT entries: JUMP_SLOT, GLOB_DAT): the object's calls
//   and address-takes of the function itself; no program code writes them.
// - data slots (absolute-address relocations, R_X86_64_64 / R_AARCH64_ABS64):
//   variables and tables initialised to the function (`xmlFreeFunc xmlFree =
//   free;`, zlib's zfree, a struct of allocator hooks). The program may set
//   them to its own functions (xmlMemSetup, sqlite3_config) at any time, a
//   constructor included: such a slot is rewritten only while it holds the
//   process's real function (`real`), never once the program set it.
// Only that object's calls change; every other object keeps calling the
// real functions.
namespace mate {
namespace platform {

struct ImportRedirect {
  const char* symbol;  // the imported name, mangled for C++ (`_Znwm`)
  void* target;        // where the object's calls go from now on
  // The process's real function, as a slot may hold it: its canonical
  // address (a non-PIE executable's PLT stub may be it), where a call binds,
  // and what an earlier redirection of the same process put there (the free
  // router's entry). A data slot is rewritten only while it holds one of
  // these; with none given, data slots are treated as import slots (tables
  // that predate the rule: CUDA's, the dlopen watch).
  void* real[3] = {nullptr, nullptr, nullptr};
  // Import slots too only where bound to `real` or not bound yet (a lazy PLT
  // entry), also where the object defines the symbol itself (libc's own calls
  // to free): a slot bound anywhere else (a module's own allocator) is left.
  bool only_real = false;
};

// A data slot this pass found (see above).
struct DataSlot {
  uintptr_t slot = 0;          // its address
  uint32_t entry = 0;          // the table entry it is initialised to
  void* held = nullptr;        // what it held when this pass read it
  bool redirected = false;     // it points at the target now (written now or before)
  bool program_owned = false;  // the program set it (it holds neither the real function nor the target)
};

struct RedirectResult {
  uint32_t slots_written = 0;     // slots changed by this call
  uint32_t slots_redirected = 0;  // slots now pointing at a target (written now or before)
  uint64_t symbols = 0;           // bit i: table[i] has at least one redirected slot
  uint64_t defined = 0;           // bit i: the object defines table[i] itself (left alone)
  const char* error = nullptr;    // why the object could not be patched (nothing written)
  std::vector<DataSlot> data;     // every data slot of a table symbol (with `real` given)
};

// Idempotent: slots already pointing at their target are left. Slots in
// read-only pages (RELRO) are made writable for the write and read-only
// again. A data slot is written with one compare-and-swap against what it
// held, so a program setting it meanwhile wins. `owned`: data slots the
// program set earlier (never written again, whatever they hold now). At
// most 64 table entries. x86-64 and aarch64.
RedirectResult RedirectImports(const LoadedObject& obj, const ImportRedirect* table, size_t n,
                               const std::vector<uintptr_t>* owned = nullptr);

// What BindOwnWeakFunctions did to one object.
struct OwnBindResult {
  uint32_t slots = 0;    // import slots now pointing at the object's own definition (written now or before)
  uint32_t written = 0;  // of them, changed by this call
  // The symbols (mangled, each once) whose slots were bound, or would have
  // been bound lazily, to another object's copy: the ones re-bound.
  std::vector<std::string> names;
  const char* error = nullptr;
};

// For every import slot (JUMP_SLOT, GLOB_DAT) of `obj` whose symbol `obj`
// itself defines as a weak function (the template instantiations C++
// emits in every object that uses them): points the slot at `obj`'s own
// definition, as RTLD_DEEPBIND would for that object alone. Without it the
// dynamic linker binds them to the first definition in the global scope
// (the executable's: node exports ~2,100 weak std:: functions), so a
// container's out-of-line code runs in another module, with its
// allocator. Functions only (a variable must stay one variable), never
// IFUNCs nor `skip`'s symbols (the redirection table's own). Only this
// object's slots change. Asks the loader (dlsym, for slots not bound yet):
// never call it inside ForEachLoadedObject.
OwnBindResult BindOwnWeakFunctions(const LoadedObject& obj, const ImportRedirect* skip, size_t n);

// Which of `names` the object imports (bit i: names[i]; at most 64): it
// calls them through an import slot and does not define them.
uint64_t ImportedNames(const LoadedObject& obj, const char* const* names, size_t n);

// The function calls to `symbol` reach: where the executable's own call
// is bound, else the default lookup. Not `&symbol`: a non-PIE executable
// (node) makes its PLT stub the canonical address, so code calling through
// the address would come back through the executable's slot.
void* CallTarget(const char* symbol);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_IMPORT_PATCHER_H_
