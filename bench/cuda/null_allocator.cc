// The least a PyTorch pluggable allocator can do: blocks cached by exact
// size over cuMemAlloc, reused at once (one stream: the reference loop's).
// bench/cuda/null_pluggable.py installs it, so loop_py.sh's
// `pluggable-null` variant measures what PyTorch's pluggable-allocator hook
// (torch.cuda.memory.CUDAPluggableAllocator) costs by itself: the floor
// under any allocator installed that way, the guard's included.
#include <dlfcn.h>
#include <sys/types.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {
using MemAlloc = int (*)(unsigned long long*, size_t);
std::mutex g_mu;
std::unordered_map<size_t, std::vector<void*>> g_free;
MemAlloc g_alloc = nullptr;
}  // namespace

extern "C" void* null_alloc(ssize_t size, int, void*) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& list = g_free[static_cast<size_t>(size)];
  if (!list.empty()) {
    void* p = list.back();
    list.pop_back();
    return p;
  }
  if (g_alloc == nullptr)
    g_alloc = reinterpret_cast<MemAlloc>(dlsym(dlopen("libcuda.so.1", RTLD_NOW), "cuMemAlloc_v2"));
  unsigned long long p = 0;
  return g_alloc(&p, size > 0 ? size : 1) == 0 ? reinterpret_cast<void*>(p) : nullptr;
}

extern "C" void null_free(void* ptr, ssize_t size, int, void*) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_free[static_cast<size_t>(size)].push_back(ptr);
}
