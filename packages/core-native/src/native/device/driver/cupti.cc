#include "device/driver/cupti.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <mutex>
#include <string>

namespace mate {
namespace cupti {

namespace {

Api g_api;
const Api* g_loaded = nullptr;
std::string g_why;
std::once_flag g_once;

void* Open() {
  // A development override (a simulated CUPTI for tests without a GPU).
  const char* forced = getenv("MATE_GUARD_CUPTI");
  if (forced && *forced) return dlopen(forced, RTLD_NOW | RTLD_LOCAL);
  // By soname first: a copy already loaded (PyTorch's) or on the library path.
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
  std::string roots[] = {getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "", getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "",
                         "/usr/local/cuda"};
  for (const std::string& root : roots) {
    if (root.empty()) continue;
#if defined(__aarch64__)
    const char* targets = "/targets/sbsa-linux/lib/";  // the toolkit's name for arm64 servers
#else
    const char* targets = "/targets/x86_64-linux/lib/";
#endif
    for (const char* dir : {"/lib64/", "/extras/CUPTI/lib64/", targets})
      for (const char* name : {"libcupti.so", "libcupti.so.13", "libcupti.so.12"})
        if (void* h = dlopen((root + dir + name).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

void LoadOnce() {
  void* lib = Open();
  if (lib == nullptr) {
    g_why = "CUPTI (libcupti.so, part of the CUDA toolkit and of PyTorch's CUDA wheels) was not found";
    return;
  }
  g_api.cuptiSubscribe = reinterpret_cast<decltype(g_api.cuptiSubscribe)>(dlsym(lib, "cuptiSubscribe"));
  g_api.cuptiUnsubscribe = reinterpret_cast<decltype(g_api.cuptiUnsubscribe)>(dlsym(lib, "cuptiUnsubscribe"));
  g_api.cuptiEnableCallback = reinterpret_cast<decltype(g_api.cuptiEnableCallback)>(dlsym(lib, "cuptiEnableCallback"));
  g_api.cuptiGetResultString =
      reinterpret_cast<decltype(g_api.cuptiGetResultString)>(dlsym(lib, "cuptiGetResultString"));
  if (!g_api.cuptiSubscribe || !g_api.cuptiUnsubscribe || !g_api.cuptiEnableCallback) {
    g_why = "the CUPTI library found lacks the callback API";
    return;
  }
  g_loaded = &g_api;
}

}  // namespace

const Api* Load(const char** why) {
  std::call_once(g_once, LoadOnce);
  if (g_loaded == nullptr && why != nullptr) *why = g_why.c_str();
  return g_loaded;
}

}  // namespace cupti
}  // namespace mate
