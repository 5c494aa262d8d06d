// platform/dlsym_gate: a module's dlsym and dlvsym imports redirected to the
// gates send "cu..." look-ups to the hook and every other look-up (and any
// with RTLD_NEXT) straight to the real function, which answers as before.
#include <dlfcn.h>
#include <string.h>

#include <string>

#include "check.h"
#include "platform/dlsym_gate.h"
#include "platform/import_patcher.h"
#include "platform/loaded_modules.h"

namespace {

using Lookup = void* (*)(void*, const char*);
using LookupVersion = void* (*)(void*, const char*, const char*);

int g_hooked = 0;
std::string g_name, g_version;
int g_answer;  // what the hook answers with

void* Hook(void* handle, const char* name, const char* version) {
  g_hooked++;
  g_name = name;
  g_version = version ? version : "(none)";
  (void)handle;
  return &g_answer;
}

struct Gated {
  void* handle = nullptr;
  Lookup lookup = nullptr;
  LookupVersion lookup_version = nullptr;
};

// The fixture library loaded, its dlsym and dlvsym imports sent to the gates.
Gated Load() {
  Gated g;
  if (!mate::platform::SetSymbolHook(&Hook)) return g;
  g.handle = dlopen(MATE_HOOK_SLOTS_LIB, RTLD_NOW | RTLD_LOCAL);
  if (g.handle == nullptr) return g;
  g.lookup = reinterpret_cast<Lookup>(dlsym(g.handle, "hook_lookup"));
  g.lookup_version = reinterpret_cast<LookupVersion>(dlsym(g.handle, "hook_lookup_version"));
  mate::platform::ForEachLoadedObject(
      [](const mate::platform::LoadedObject& obj, void*) {
        if (obj.path == nullptr || strstr(obj.path, "hook_slots") == nullptr) return true;
        const mate::platform::ImportRedirect gates[] = {{"dlsym", mate::platform::DlsymGate()},
                                                        {"dlvsym", mate::platform::DlvsymGate()}};
        mate::platform::RedirectImports(obj, gates, 2);
        return false;
      },
      nullptr);
  return g;
}

}  // namespace

TEST(a_look_up_of_a_cuda_driver_name_goes_to_the_hook_every_other_one_to_dlsym) {
  Gated g = Load();
  CHECK(g.lookup != nullptr && g.lookup_version != nullptr);
  if (g.lookup == nullptr || g.lookup_version == nullptr) return;
  g_hooked = 0;
  CHECK(g.lookup(RTLD_DEFAULT, "malloc") == dlsym(RTLD_DEFAULT, "malloc"));
  CHECK(g.lookup(RTLD_DEFAULT, "calloc") == dlsym(RTLD_DEFAULT, "calloc"));
  CHECK(g.lookup(RTLD_DEFAULT, "c") == dlsym(RTLD_DEFAULT, "c"));  // one letter: not "cu"
  CHECK_EQ(g_hooked, 0);
  CHECK(g.lookup(RTLD_DEFAULT, "cuLaunchKernel") == &g_answer);
  CHECK_EQ(g_hooked, 1);
  CHECK(g_name == "cuLaunchKernel");
  CHECK(g_version == "(none)");  // dlsym's gate clears the third argument
  CHECK(g.lookup_version(RTLD_DEFAULT, "cuGetProcAddress", "libcuda.so.1") == &g_answer);
  CHECK_EQ(g_hooked, 2);
  CHECK(g_version == "libcuda.so.1");
  // RTLD_NEXT is answered for the caller, never through the hook.
  CHECK(g.lookup(RTLD_NEXT, "cuLaunchKernel") == nullptr);
  CHECK(g.lookup_version(RTLD_NEXT, "cuLaunchKernel", "GLIBC_2.2.5") == nullptr);
  CHECK_EQ(g_hooked, 2);
  dlclose(g.handle);
}
