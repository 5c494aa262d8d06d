#include "native_heap/native_heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include <cstring>
#include <mutex>

#include "native_heap/heap_ops.h"
#include "native_heap/replacements.h"
#include "platform/import_patcher.h"
#include "platform/load_watch.h"
#include "platform/loaded_modules.h"
#include "platform/linux/module_map.h"

namespace mate {
namespace native_heap {

namespace {

struct State {
  std::mutex mu;
  bool started = false;
  bool log = false;
  std::vector<std::string> globs;
  std::vector<bool> matched;  // per glob
  platform::RedirectedModuleList modules;
  uint64_t generation = ~0ull;
  uintptr_t own_lo = 0, own_hi = 0;
};

State& S() {
  static State* s = new State();  // never destroyed: frees may come during exit
  return *s;
}

// The C runtime and the dynamic linker own the heap itself; patching them
// would route every module's memory through us.
bool NeverPatched(const char* path) {
  static const char* const kPrefixes[] = {
      "libc.so", "libc-", "libstdc++", "libc++", "libgcc_s", "ld-linux", "ld64.so", "ld-musl",
      "libpthread", "libdl.so", "libdl-", "libm.so", "libm-", "librt.so", "linux-vdso", "linux-gate",
      "libnode.so", "libv8",  // Node itself where it is a shared library (distribution builds)
  };
  return platform::ModuleNamedLike(path, kPrefixes);
}

// Under S().mu.
void PatchLoaded(State& s) {
  s.generation = platform::LoadGeneration();
  RefreshModuleMap();  // reports name the new module
  struct Ctx { State* s; } ctx{&s};
  platform::ForEachLoadedObject(
      [](const platform::LoadedObject& obj, void* p) {
        State& s = *static_cast<Ctx*>(p)->s;
        if (obj.main_program || obj.path[0] == '\0' || NeverPatched(obj.path)) return true;
        if (obj.base >= s.own_lo && obj.base < s.own_hi) return true;  // mate-guard itself
        bool any = false;
        for (size_t g = 0; g < s.globs.size(); g++) {
          if (!platform::GlobChooses(s.globs[g], obj.path)) continue;
          s.matched[g] = true;
          any = true;
        }
        if (!any) return true;
        size_t n;
        const platform::ImportRedirect* table = Replacements(&n);
        platform::RedirectResult r = platform::RedirectImports(obj, table, n);
        platform::RedirectedModuleList::Recorded rec = s.modules.Record(obj, r, table, n);
        const std::string& names = rec.names;
        const std::string& own = rec.own;
        if (s.log && (rec.fresh || r.slots_written)) {
          if (r.error)
            dprintf(2, "[mate-guard] native heap: could not redirect %s: %s\n", obj.path, r.error);
          dprintf(2, "[mate-guard] native heap: %s: %u import slots redirected (%s)%s%s\n", obj.path,
                  r.slots_redirected, names.empty() ? "no allocator imports" : names.c_str(),
                  own.empty() ? "" : "; defines its own ", own.c_str());
        }
        return true;
      },
      &ctx);
}

}  // namespace

bool Start(GuardedAllocator* allocator, const StartOptions& options, std::string* error) {
  if (allocator == nullptr) {
    *error = "the guard allocator is not created";
    return false;
  }
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started) {
    ConfigureOps(allocator, options);
    s.log = options.log;
    platform::ObjectRange(reinterpret_cast<const void*>(&Start), &s.own_lo, &s.own_hi);
    s.started = true;
    // Every addon Node loads from now on is patched as soon as dlopen
    // returns, before Node runs its registration function.
    bool watched = platform::WatchLoads(&Refresh);
    if (s.log && watched)
      dprintf(2, "[mate-guard] native heap: watching dlopen: addons are patched before their initializer runs\n");
  }
  for (const std::string& g : options.globs) {
    bool known = false;
    for (const std::string& h : s.globs) known = known || h == g;
    if (!known) {
      s.globs.push_back(g);
      s.matched.push_back(false);
    }
  }
  PatchLoaded(s);
  return true;
}

bool Active() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.started;
}

void Refresh() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started || platform::LoadGeneration() == s.generation) return;
  PatchLoaded(s);
}

std::vector<PatchedModule> Modules() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.modules.modules();
}

std::vector<std::string> Globs() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.globs;
}

std::vector<std::string> UnmatchedGlobs() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<std::string> out;
  for (size_t i = 0; i < s.globs.size(); i++)
    if (!s.matched[i]) out.push_back(s.globs[i]);
  return out;
}

}  // namespace native_heap
}  // namespace mate
