#include "native_heap/free_router.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include "native_heap/heap_ops.h"

namespace mate {
namespace native_heap {

namespace {

// The real functions, called through these pointers: once the executable's
// slots are routed, `free` by name would come back here (platform::CallTarget).
struct Real {
  void (*free)(void*);
  void* (*realloc)(void*, size_t);
  void* (*reallocarray)(void*, size_t, size_t);
  size_t (*usable_size)(void*);
} g_real;

// The common case (not ours) costs one range test before the real call.
void RoutedFree(void* p) {
  if (!InGuardedRegion(p) || !TryFree(p, From::kElsewhere)) g_real.free(p);
}

void* RoutedRealloc(void* p, size_t n) {
  void* out;
  if (InGuardedRegion(p) && TryRealloc(p, n, &out, From::kElsewhere)) return out;
  return g_real.realloc(p, n);
}

void* RoutedReallocArray(void* p, size_t n, size_t m) {
  size_t total;
  if (InGuardedRegion(p) && !__builtin_mul_overflow(n, m, &total)) {
    void* out;
    if (TryRealloc(p, total, &out, From::kElsewhere)) return out;
  }
  return g_real.reallocarray(p, n, m);
}

size_t RoutedUsableSize(void* p) {
  size_t size;
  if (InGuardedRegion(p) && TryUsableSize(p, &size)) return size;
  return g_real.usable_size(p);
}

template <typename F>
void* Fn(F f) {
  return reinterpret_cast<void*>(f);
}

template <typename F>
F Resolve(const char* symbol, F fallback) {
  void* p = platform::CallTarget(symbol);
  return p != nullptr ? reinterpret_cast<F>(p) : fallback;
}

}  // namespace

const platform::ImportRedirect* FreeRoutes(size_t* count) {
  static platform::ImportRedirect routes[4];
  static bool built = false;
  if (!built) {
    g_real.free = Resolve("free", &free);
    g_real.realloc = Resolve("realloc", &realloc);
    g_real.reallocarray = Resolve("reallocarray", &reallocarray);
    g_real.usable_size = Resolve("malloc_usable_size", &malloc_usable_size);
    // A slot is bound to the canonical address or to the real function;
    // one bound elsewhere is a module's own allocator (left alone).
    routes[0] = {"free", Fn(&RoutedFree), {Fn(&free), Fn(g_real.free)}, true};
    routes[1] = {"realloc", Fn(&RoutedRealloc), {Fn(&realloc), Fn(g_real.realloc)}, true};
    routes[2] = {"reallocarray", Fn(&RoutedReallocArray), {Fn(&reallocarray), Fn(g_real.reallocarray)}, true};
    routes[3] = {"malloc_usable_size", Fn(&RoutedUsableSize), {Fn(&malloc_usable_size), Fn(g_real.usable_size)}, true};
    built = true;
  }
  *count = sizeof(routes) / sizeof(routes[0]);
  return routes;
}

}  // namespace native_heap
}  // namespace mate
