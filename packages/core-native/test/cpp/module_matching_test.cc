// platform/: which modules a redirection chooses and which it never patches.
#include "check.h"
#include "platform/never_patched.h"
#include "platform/redirected_modules.h"

namespace {

mate::platform::LoadedObject Obj(const char* path, bool main_program = false) {
  return mate::platform::LoadedObject{path, 0, nullptr, 0, main_program};
}

}  // namespace

TEST(a_glob_chooses_a_module_by_its_path_or_its_file_name) {
  using mate::platform::GlobChooses;
  CHECK(GlobChooses("*my_addon.node", "/app/build/Release/my_addon.node"));
  CHECK(GlobChooses("my_addon.node", "/app/build/Release/my_addon.node"));
  CHECK(GlobChooses("/app/*/libvips*.so*", "/app/lib/libvips-cpp.so.42"));
  CHECK(!GlobChooses("*other.node", "/app/build/Release/my_addon.node"));
}

TEST(the_loader_the_runtimes_node_and_nvidia_are_each_their_own_group) {
  using namespace mate::platform;
  CHECK(NeverPatched(Obj("/lib64/ld-linux-x86-64.so.2"), kNeverLoader));
  CHECK(NeverPatched(Obj(""), kNeverLoader));  // unnamed: the vDSO
  CHECK(!NeverPatched(Obj("/lib/x86_64-linux-gnu/libc.so.6"), kNeverLoader));
  CHECK(NeverPatched(Obj("/lib/x86_64-linux-gnu/libc.so.6"), kNeverRuntime));
  CHECK(NeverPatched(Obj("/usr/lib/libstdc++.so.6"), kNeverRuntime));
  CHECK(NeverPatched(Obj("/usr/bin/node", true), kNeverNode));
  CHECK(NeverPatched(Obj("/usr/lib/libnode.so.115"), kNeverNode));
  CHECK(!NeverPatched(Obj("/usr/bin/node", true), kNeverLoader | kNeverRuntime));
  CHECK(NeverPatched(Obj("/usr/lib/libcudart.so.13"), kNeverNvidia));
  CHECK(!NeverPatched(Obj("/usr/lib/libcudart.so.13"), kNeverLoader | kNeverRuntime | kNeverNode));
  CHECK(!NeverPatched(Obj("/app/build/Release/my_addon.node"), ~0u));
}
