#ifndef MATE_DEVICE_REDIRECT_H_
#define MATE_DEVICE_REDIRECT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "platform/redirected_modules.h"

// No-code-change redirection: the CUDA allocation calls an addon makes
// itself (cudaMalloc, cudaFree, cudaMallocAsync, cudaFreeAsync, cuMemAlloc,
// cuMemFree and their _v2 names, cuMemAllocAsync, cuMemFreeAsync) go to the
// device guard, and its graph captures (cudaStreamBeginCapture,
// cuStreamBeginCapture...) are refused, by rewriting the module's import
// slots (platform/import_patcher.h) as the native-heap guard does. Which
// modules: every Node addon (`*.node`) and the modules matching the
// nativeModules globs (a library an addon pulls in), loaded now and later
// (platform/load_watch.h); never mate-guard itself, the C runtime or
// NVIDIA's own libraries. Calls a module makes through pointers it looked
// up (dlsym, cuGetProcAddress, a statically linked CUDA runtime) are not
// imports and are not redirected.
namespace mate {
namespace device {

struct RedirectOptions {
  std::vector<std::string> globs;  // nativeModules: more modules than the addons
  bool log = false;                // a line per redirected module
};

void StartRedirect(const RedirectOptions& options);
// Redirects modules loaded since the last call (cheap when none were).
void RefreshRedirect();

using RedirectedModule = platform::RedirectedModule;
std::vector<RedirectedModule> RedirectedModules();

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_REDIRECT_H_
