#include "platform/never_patched.h"

#include "platform/redirected_modules.h"

namespace mate {
namespace platform {

bool NeverPatched(const LoadedObject& obj, unsigned never) {
  static const char* const kLoader[] = {"ld-linux", "ld64.so", "ld-musl", "linux-vdso", "linux-gate"};
  static const char* const kRuntime[] = {
      "libc.so",  "libc-",  "libstdc++", "libc++", "libgcc_s", "libpthread",
      "libdl.so", "libdl-", "libm.so",   "libm-",  "librt.so",
  };
  static const char* const kNode[] = {"libnode.so", "libv8"};
  static const char* const kNvidia[] = {
      "libcuda.",     "libcudart",   "libcublas",   "libcudnn",      "libcufft",
      "libcurand",    "libcusparse", "libcusolver", "libnccl",       "libnvrtc",
      "libnvJitLink", "libcupti",    "libnvidia-",  "libnvToolsExt", "libmate_guard_cuda",
  };
  // The vDSO has no path; neither has a module we could not name.
  if (obj.path == nullptr || obj.path[0] == '\0') return (never & kNeverLoader) != 0;
  if ((never & kNeverLoader) && ModuleNamedLike(obj.path, kLoader)) return true;
  if ((never & kNeverRuntime) && ModuleNamedLike(obj.path, kRuntime)) return true;
  if ((never & kNeverNode) && (obj.main_program || ModuleNamedLike(obj.path, kNode))) return true;
  if ((never & kNeverNvidia) && ModuleNamedLike(obj.path, kNvidia)) return true;
  return false;
}

}  // namespace platform
}  // namespace mate
