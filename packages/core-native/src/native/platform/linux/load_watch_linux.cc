#include "platform/load_watch.h"

#include <dlfcn.h>
#include <errno.h>

#include <cstring>
#include <mutex>

#include "platform/import_patcher.h"
#include "platform/loaded_modules.h"

namespace mate {
namespace platform {

namespace {

constexpr int kMaxListeners = 4;

std::mutex g_mu;
LoadListener g_listeners[kMaxListeners];
int g_count = 0;
bool g_watched = false;

const char* BaseName(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// The loader's dlopen: the real one (our own import is never redirected),
// then the listeners. Transparent to the caller: same handle, errno and
// dlerror state. Absolute paths (all Node passes) resolve the same whoever
// calls dlopen.
void* WatchedDlopen(const char* file, int mode) {
  void* handle = dlopen(file, mode);
  if (handle != nullptr) {
    int saved = errno;
    LoadListener copy[kMaxListeners];
    int n;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      n = g_count;
      for (int i = 0; i < n; i++) copy[i] = g_listeners[i];
    }
    for (int i = 0; i < n; i++) copy[i]();
    errno = saved;
  }
  return handle;
}

}  // namespace

bool WatchLoads(LoadListener listener) {
  std::lock_guard<std::mutex> lock(g_mu);
  bool known = false;
  for (int i = 0; i < g_count; i++) known = known || g_listeners[i] == listener;
  if (!known && g_count < kMaxListeners) g_listeners[g_count++] = listener;
  if (!g_watched) {
    ForEachLoadedObject(
        [](const LoadedObject& obj, void*) {
          // The program's loader: the executable's, libnode.so's (distribution
          // builds of Node) or libpython's (a Python built --enable-shared
          // imports extension modules from there).
          if (!obj.main_program && strncmp(BaseName(obj.path), "libnode.so", 10) != 0 &&
              strncmp(BaseName(obj.path), "libpython", 9) != 0)
            return true;
          const ImportRedirect watch[] = {{"dlopen", reinterpret_cast<void*>(&WatchedDlopen)}};
          RedirectResult r = RedirectImports(obj, watch, 1);
          if (r.slots_redirected > 0 && r.error == nullptr) g_watched = true;
          return true;
        },
        nullptr);
  }
  return g_watched;
}

}  // namespace platform
}  // namespace mate
