#ifndef MATE_PLATFORM_IMPORT_REDIRECTOR_H_
#define MATE_PLATFORM_IMPORT_REDIRECTOR_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "platform/import_patcher.h"
#include "platform/never_patched.h"
#include "platform/redirected_modules.h"

// One redirection table applied to a chosen set of loaded modules, now and
// whenever more are loaded: the native heap's allocation calls in the
// modules a user chose, its process-wide free routing, and the CUDA calls
// of addons all use it. Which modules: those matching the globs, or every
// addon (`*.node`), or every module; never mate-guard itself nor the
// groups of platform/never_patched.h the redirection names.
namespace mate {
namespace platform {

enum class Choose {
  kGlobs,           // modules matching a glob
  kGlobsAndAddons,  // those and every `*.node`
  kEveryModule,     // every module (the executable included, unless `never` says otherwise)
};

struct RedirectorConfig {
  const char* name;  // for log lines: "native heap", "cuda"
  const ImportRedirect* table;
  size_t n;
  Choose choose;
  unsigned never;              // NeverPatch groups left alone
  void (*before)() = nullptr;  // runs before each pass (e.g. the report module map)
  // Modules another redirection handles (the free router leaves the native
  // heap's chosen modules to it: one owner per slot).
  bool (*skip)(const LoadedObject& obj) = nullptr;
  // Runs for each module after it was patched (inside the pass: the loader's
  // list is held, so it must not load, unload or ask the loader).
  void (*patched)(const LoadedObject& obj) = nullptr;
  // Each module's own weak functions win for its calls (BindOwnWeakFunctions,
  // once per load, after the pass): the native heap's chosen modules.
  bool bind_own_weak = false;
  // Imports recorded per module, once per load (not redirected): the
  // native heap's memory-mapping calls, the sign of an allocator of its own.
  const char* const* noted_imports = nullptr;
  size_t noted_count = 0;
};

class ImportRedirector {
 public:
  explicit ImportRedirector(const RedirectorConfig& config) : c_(config) {}

  // Adds `globs` and patches what is loaded. The first call records
  // mate-guard's own range (the object holding `self`).
  void Start(const std::vector<std::string>& globs, bool log, const void* self);
  bool Started();
  // Patches what was loaded since the last pass (one cheap check when nothing was).
  void Refresh();
  // Whether this redirection takes `obj` (records nothing).
  bool Takes(const LoadedObject& obj);

  std::vector<RedirectedModule> Modules();
  std::vector<std::string> Globs();
  std::vector<std::string> UnmatchedGlobs();
  // Import slots pointing at the table's targets, over every module.
  uint64_t SlotsRedirected();

 private:
  void PatchLoaded();  // under mu_
  bool Chosen(const LoadedObject& obj);

  const RedirectorConfig c_;
  std::mutex mu_;
  bool started_ = false;
  bool log_ = false;
  std::vector<std::string> globs_;
  std::vector<bool> matched_;  // per glob
  RedirectedModuleList modules_;
  uint64_t generation_ = ~0ull;
  uintptr_t own_lo_ = 0, own_hi_ = 0;
};

// The log line for a variable (data slot) first seen, or found set by the program.
std::string VariableLine(const char* redirector, const char* path, const RedirectedVariable& v);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_IMPORT_REDIRECTOR_H_
