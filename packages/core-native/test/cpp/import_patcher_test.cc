// platform/import_patcher: import slots (PLT/GOT) are redirected; data
// slots (variables initialised to the function, which the program may set)
// only while they hold the real function, never once the program set them.
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "check.h"
#include "platform/import_patcher.h"
#include "platform/loaded_modules.h"

namespace {

using FreeFn = void (*)(void*);
using MallocFn = void* (*)(size_t);

int g_freed = 0;
void CountingFree(void* p) {
  g_freed++;
  free(p);
}
void* CountingMalloc(size_t n) { return malloc(n); }
void ProgramFree(void* p) { free(p); }

struct Fixture {
  void* handle = nullptr;
  FreeFn* hook_free = nullptr;
  MallocFn* hook_malloc = nullptr;
  void (*plain_free)(void*) = nullptr;
  mate::platform::LoadedObject obj{};
  std::string path;
};

// Loads a fresh copy of the fixture library (RTLD_LOCAL; dlclose'd by the test).
Fixture Load() {
  Fixture f;
  f.handle = dlopen(MATE_HOOK_SLOTS_LIB, RTLD_NOW | RTLD_LOCAL);
  if (f.handle == nullptr) {
    fprintf(stderr, "  dlopen %s: %s\n", MATE_HOOK_SLOTS_LIB, dlerror());
    return f;
  }
  f.hook_free = static_cast<FreeFn*>(dlsym(f.handle, "hook_free"));
  f.hook_malloc = static_cast<MallocFn*>(dlsym(f.handle, "hook_malloc"));
  f.plain_free = reinterpret_cast<void (*)(void*)>(dlsym(f.handle, "hook_plain_free"));
  struct Ctx {
    Fixture* f;
  } ctx{&f};
  mate::platform::ForEachLoadedObject(
      [](const mate::platform::LoadedObject& obj, void* p) {
        auto* c = static_cast<Ctx*>(p);
        if (obj.path == nullptr || strstr(obj.path, "hook_slots") == nullptr) return true;
        c->f->obj = obj;
        c->f->path = obj.path;
        c->f->obj.path = c->f->path.c_str();
        return false;
      },
      &ctx);
  return f;
}

std::vector<mate::platform::ImportRedirect> Table() {
  mate::platform::ImportRedirect free_entry{"free", reinterpret_cast<void*>(&CountingFree)};
  free_entry.real[0] = dlsym(RTLD_DEFAULT, "free");
  free_entry.real[1] = mate::platform::CallTarget("free");
  mate::platform::ImportRedirect malloc_entry{"malloc", reinterpret_cast<void*>(&CountingMalloc)};
  malloc_entry.real[0] = dlsym(RTLD_DEFAULT, "malloc");
  malloc_entry.real[1] = mate::platform::CallTarget("malloc");
  return {free_entry, malloc_entry};
}

}  // namespace

TEST(a_variable_still_holding_libc_free_is_redirected_and_the_import_too) {
  Fixture f = Load();
  CHECK(f.handle != nullptr && f.hook_free != nullptr && f.obj.phdrs != nullptr);
  if (f.obj.phdrs == nullptr) return;
  std::vector<mate::platform::ImportRedirect> t = Table();
  mate::platform::RedirectResult r = mate::platform::RedirectImports(f.obj, t.data(), t.size());
  CHECK(r.error == nullptr);
  CHECK(*f.hook_free == &CountingFree);
  CHECK(*f.hook_malloc == &CountingMalloc);
  CHECK_EQ(r.data.size(), 2u);
  for (const mate::platform::DataSlot& d : r.data) CHECK(d.redirected && !d.program_owned);
  g_freed = 0;
  f.plain_free(malloc(8));
  CHECK_EQ(g_freed, 1);  // the import slot
  dlclose(f.handle);
}

TEST(a_variable_the_program_set_is_left_with_the_programs_function) {
  Fixture f = Load();
  CHECK(f.obj.phdrs != nullptr && f.hook_free != nullptr);
  if (f.obj.phdrs == nullptr || f.hook_free == nullptr) return;
  *f.hook_free = &ProgramFree;  // xmlMemSetup in a constructor
  std::vector<mate::platform::ImportRedirect> t = Table();
  mate::platform::RedirectResult r = mate::platform::RedirectImports(f.obj, t.data(), t.size());
  CHECK(*f.hook_free == &ProgramFree);
  CHECK(*f.hook_malloc == &CountingMalloc);
  bool found = false;
  for (const mate::platform::DataSlot& d : r.data) {
    if (d.slot != reinterpret_cast<uintptr_t>(f.hook_free)) continue;
    found = true;
    CHECK(d.program_owned && !d.redirected);
    CHECK(d.held == reinterpret_cast<void*>(&ProgramFree));
  }
  CHECK(found);
  dlclose(f.handle);
}

TEST(a_variable_set_after_install_is_never_written_again) {
  Fixture f = Load();
  CHECK(f.obj.phdrs != nullptr && f.hook_free != nullptr);
  if (f.obj.phdrs == nullptr || f.hook_free == nullptr) return;
  std::vector<mate::platform::ImportRedirect> t = Table();
  mate::platform::RedirectImports(f.obj, t.data(), t.size());
  CHECK(*f.hook_free == &CountingFree);
  *f.hook_free = &ProgramFree;  // set in the module init, after install
  mate::platform::RedirectResult again = mate::platform::RedirectImports(f.obj, t.data(), t.size());
  CHECK(*f.hook_free == &ProgramFree);
  CHECK_EQ(again.slots_written, 0u);
  // Owned: even set back to libc's own function, it stays the program's choice.
  std::vector<uintptr_t> owned{reinterpret_cast<uintptr_t>(f.hook_free)};
  *f.hook_free = reinterpret_cast<FreeFn>(dlsym(RTLD_DEFAULT, "free"));
  mate::platform::RedirectImports(f.obj, t.data(), t.size(), &owned);
  CHECK(*f.hook_free == reinterpret_cast<FreeFn>(dlsym(RTLD_DEFAULT, "free")));
  dlclose(f.handle);
}
