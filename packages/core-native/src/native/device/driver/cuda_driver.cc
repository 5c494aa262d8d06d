#include "device/driver/cuda_driver.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <mutex>

namespace mate {
namespace cuda {

namespace {
Driver g_driver;
void* g_library = nullptr;
const Driver* g_loaded = nullptr;
const char* g_why = nullptr;
std::once_flag g_once;

void LoadOnce() {
  // A development override (a driver built for tests); users never set it.
  const char* path = getenv("MATE_GUARD_CUDA_DRIVER");
  void* lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    g_why = "the CUDA driver (libcuda.so.1) could not be loaded: no NVIDIA driver on this machine";
    return;
  }
  g_library = lib;
#define MATE_CUDA_FN(ret, name, symbol, params)                                               \
  g_driver.name = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));                        \
  if (g_driver.name == nullptr) {                                                             \
    g_why = "the CUDA driver is too old: it lacks " symbol " (CUDA 11.2 or newer is needed)"; \
    return;                                                                                   \
  }
#define MATE_CUDA_OPTIONAL_FN(ret, name, symbol, params) \
  g_driver.name = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));
#include "device/driver/cuda_functions.inc"
#undef MATE_CUDA_OPTIONAL_FN
#undef MATE_CUDA_FN
  CUresult r = g_driver.cuInit(0);
  if (r != kSuccess) {
    g_why = r == kErrorNoDevice ? "the CUDA driver found no GPU (cuInit: CUDA_ERROR_NO_DEVICE)"
                                : "the CUDA driver could not start (cuInit failed)";
    return;
  }
  g_loaded = &g_driver;
}
}  // namespace

const Driver* Load(const char** why) {
  std::call_once(g_once, LoadOnce);
  if (g_loaded == nullptr && why != nullptr) *why = g_why;
  return g_loaded;
}

void* LibraryHandle() { return g_loaded != nullptr ? g_library : nullptr; }

const char* ErrorName(CUresult r) {
  const char* s = nullptr;
  if (g_loaded != nullptr && g_loaded->cuGetErrorName(r, &s) == kSuccess && s != nullptr) return s;
  return r == kErrorIllegalAddress ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN";
}

const char* ErrorText(CUresult r) {
  const char* s = nullptr;
  if (g_loaded != nullptr && g_loaded->cuGetErrorString(r, &s) == kSuccess && s != nullptr) return s;
  return r == kErrorIllegalAddress ? "an illegal memory access was encountered" : "unknown error";
}

bool IsSticky(CUresult r) {
  // Kernel exceptions (illegal address, misaligned address, launch failure,
  // assert, ...) leave the context unusable: 700..719 in the driver's table.
  return r >= 700 && r <= 719;
}

}  // namespace cuda
}  // namespace mate
