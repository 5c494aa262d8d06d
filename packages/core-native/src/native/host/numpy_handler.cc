#include "host/numpy_handler.h"

#include <string.h>

#include "host/host_guard.h"

namespace mate {
namespace host {
namespace {

NumpyHandler g_previous;  // a copy: numpy's default handler is static, but a user's may not be
bool g_have_previous = false;

void* PreviousMalloc(size_t size) {
  return g_have_previous ? g_previous.allocator.malloc(g_previous.allocator.ctx, size) : nullptr;
}

void* GuardMalloc(void* /*ctx*/, size_t size) {
  if (void* p = Allocate(size, false)) return p;
  CountNumpyFallback();
  return PreviousMalloc(size);
}

void* GuardCalloc(void* /*ctx*/, size_t nelem, size_t elsize) {
  size_t size;
  if (__builtin_mul_overflow(nelem, elsize, &size)) return nullptr;  // numpy raises MemoryError
  if (void* p = Allocate(size, true)) return p;
  CountNumpyFallback();
  return g_have_previous ? g_previous.allocator.calloc(g_previous.allocator.ctx, nelem, elsize) : nullptr;
}

void GuardFree(void* /*ctx*/, void* ptr, size_t size) {
  if (ptr == nullptr) return;
  // O(1): one range check. Not ours: a fallback block, made by the previous handler.
  if (Free(ptr)) return;
  CountNumpyForeign();
  if (g_have_previous) g_previous.allocator.free(g_previous.allocator.ctx, ptr, size);
}

void* GuardRealloc(void* ctx, void* ptr, size_t new_size) {
  if (ptr == nullptr) return GuardMalloc(ctx, new_size);
  size_t old = 0;
  if (!LiveSize(ptr, &old)) {
    CountNumpyForeign();
    return g_have_previous ? g_previous.allocator.realloc(g_previous.allocator.ctx, ptr, new_size) : nullptr;
  }
  // A fresh slot (its guard right after the new end) and the old one quarantined.
  void* fresh = GuardMalloc(ctx, new_size);
  if (fresh == nullptr) return nullptr;  // the old block stays valid, as realloc promises
  memcpy(fresh, ptr, old < new_size ? old : new_size);
  Free(ptr);
  return fresh;
}

NumpyHandler g_handler = {"mate_guard", 1, {nullptr, GuardMalloc, GuardCalloc, GuardRealloc, GuardFree}};

}  // namespace

NumpyHandler* GuardNumpyHandler(const NumpyHandler* previous) {
  if (previous != nullptr && previous != &g_handler && !g_have_previous) {
    g_previous = *previous;
    g_have_previous = true;
  }
  return &g_handler;
}

}  // namespace host
}  // namespace mate
