#include "native_heap/native_heap.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>

#include <mutex>

#include "native_heap/foreign_quarantine.h"
#include "native_heap/free_router.h"
#include "native_heap/heap_ops.h"
#include "native_heap/replacements.h"
#include "platform/import_redirector.h"
#include "platform/linux/module_map.h"
#include "platform/load_watch.h"

namespace mate {
namespace native_heap {

namespace {

// The chosen modules' allocation calls. The runtimes and Node implement
// the heap or are not the user's code.
// A chosen module's loaded range, so its allocation calls can be told
// apart by return address (heap_ops: NoteCaller).
void RegisterRange(const platform::LoadedObject& obj) {
  const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (uint16_t i = 0; i < obj.phnum; i++) {
    if (ph[i].p_type != PT_LOAD) continue;
    uintptr_t start = obj.base + ph[i].p_vaddr, end = start + ph[i].p_memsz;
    if (start < lo) lo = start;
    if (end > hi) hi = end;
  }
  if (lo < hi) RegisterChosenModule(obj.base, lo, hi);
}

// Calls that map memory directly: a module that makes them and imports no
// allocation function carries an allocator of its own (Rust's, Go's).
const char* const kMemoryImports[] = {"mmap", "mmap64", "mremap", "sbrk", "brk"};

platform::ImportRedirector& Chosen() {
  static platform::ImportRedirector* r = [] {
    size_t n;
    const platform::ImportRedirect* table = Replacements(&n);
    platform::RedirectorConfig c{"native heap",
                                 table,
                                 n,
                                 platform::Choose::kGlobs,
                                 platform::kNeverLoader | platform::kNeverRuntime | platform::kNeverNode,
                                 [] { RefreshModuleMap(); }};
    c.patched = RegisterRange;
    // Its own C++ template code (weak definitions node exports too) runs
    // from the module, so its containers allocate through the guard.
    c.bind_own_weak = true;
    c.noted_imports = kMemoryImports;
    c.noted_count = sizeof(kMemoryImports) / sizeof(kMemoryImports[0]);
    return new platform::ImportRedirector(c);
  }();
  return *r;  // never destroyed: frees may come during exit
}

// Every module's frees (the executable and the runtimes included): only
// the loader is left alone, and the chosen modules once chosen (their
// replacements route frees themselves: one owner per slot).
platform::ImportRedirector& Router() {
  static platform::ImportRedirector* r = [] {
    size_t n;
    const platform::ImportRedirect* table = FreeRoutes(&n);
    platform::RedirectorConfig c{"native heap (frees)", table, n, platform::Choose::kEveryModule,
                                 platform::kNeverLoader};
    c.skip = [](const platform::LoadedObject& obj) { return Chosen().Takes(obj); };
    return new platform::ImportRedirector(c);
  }();
  return *r;
}

// One pass at a time: the router's pass asks the chosen list (Takes) while
// the loader's list is held, which must not wait on a chosen pass waiting
// for that list.
std::mutex g_pass_mu;

}  // namespace

bool Start(GuardedAllocator* allocator, const StartOptions& options, std::string* error) {
  if (allocator == nullptr) {
    *error = "the guard allocator is not created";
    return false;
  }
  std::lock_guard<std::mutex> lock(g_pass_mu);
  bool first = !Chosen().Started();
  if (first) {
    ConfigureOps(allocator, options);
    // Sampling sends most of the module's own blocks to libc: their frees
    // would pay the hold (a stack capture, a fill) on every call, the cost
    // sampling is there to avoid; the foreign quarantine is off then.
    bool all = options.sample_rate <= 1;
    ConfigureForeignQuarantine(all ? allocator->options().quarantine_max_bytes : 0,
                               allocator->options().quarantine_max_count, NewTakesFromMalloc());
  }
  // The router first: a chosen module's own free slots then go to its
  // replacements, which the router leaves alone.
  Router().Start({}, options.log, reinterpret_cast<const void*>(&Start));
  Chosen().Start(options.globs, options.log, reinterpret_cast<const void*>(&Start));
  if (first) {
    // Every addon Node loads from now on is patched as soon as dlopen
    // returns, before Node runs its registration function.
    bool watched = platform::WatchLoads(&Refresh);
    if (options.log && watched)
      dprintf(2, "[mate-guard] native heap: watching dlopen: addons are patched before their initializer runs\n");
  }
  return true;
}

bool Active() { return Chosen().Started(); }

void Refresh() {
  std::lock_guard<std::mutex> lock(g_pass_mu);
  Router().Refresh();
  Chosen().Refresh();
}

std::vector<PatchedModule> Modules() { return Chosen().Modules(); }
std::vector<std::string> Globs() { return Chosen().Globs(); }
std::vector<std::string> UnmatchedGlobs() { return Chosen().UnmatchedGlobs(); }
uint64_t RoutedSlots() { return Router().SlotsRedirected(); }

}  // namespace native_heap
}  // namespace mate
