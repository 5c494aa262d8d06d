#include "host/numpy_handler.h"

#include <string.h>

#include <mutex>
#include <unordered_set>

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

// The default handler's copy (CountingDefaultHandler). Blocks it makes
// after install are remembered until freed, so a free tells them from
// blocks made before install. Both are rare (the guard's handler serves
// every context it was set in): a lock and a set are cheap enough.
NumpyHandler g_default;
std::mutex g_default_mu;
std::unordered_set<void*>* g_made_unguarded = nullptr;  // never freed: frees may come at exit

void Remember(void* p) {
  std::lock_guard<std::mutex> lock(g_default_mu);
  if (g_made_unguarded == nullptr) g_made_unguarded = new std::unordered_set<void*>();
  g_made_unguarded->insert(p);
}

void NoteUnguarded(void* p) {
  if (p == nullptr) return;
  CountNumpyUnguarded();
  Remember(p);
}

// True when `p` was made by the default handler after install.
bool ForgetUnguarded(void* p) {
  std::lock_guard<std::mutex> lock(g_default_mu);
  return g_made_unguarded != nullptr && g_made_unguarded->erase(p) != 0;
}

void* DefaultMalloc(void* /*ctx*/, size_t size) {
  void* p = g_default.allocator.malloc(g_default.allocator.ctx, size);
  NoteUnguarded(p);
  return p;
}

void* DefaultCalloc(void* /*ctx*/, size_t nelem, size_t elsize) {
  void* p = g_default.allocator.calloc(g_default.allocator.ctx, nelem, elsize);
  NoteUnguarded(p);
  return p;
}

void* DefaultRealloc(void* ctx, void* ptr, size_t new_size) {
  if (ptr == nullptr) return DefaultMalloc(ctx, new_size);
  bool after = ForgetUnguarded(ptr);
  void* p = g_default.allocator.realloc(g_default.allocator.ctx, ptr, new_size);
  // Made after install, moved or not (the old block when it failed): still known as such.
  if (after) Remember(p != nullptr ? p : ptr);
  return p;
}

void DefaultFree(void* /*ctx*/, void* ptr, size_t size) {
  if (ptr != nullptr && !ForgetUnguarded(ptr)) CountNumpyBeforeInstallFreed();
  g_default.allocator.free(g_default.allocator.ctx, ptr, size);
}

NumpyHandler g_counting = {"", 1, {nullptr, DefaultMalloc, DefaultCalloc, DefaultRealloc, DefaultFree}};

}  // namespace

NumpyHandler* CountingDefaultHandler(const NumpyHandler* numpy_default) {
  if (numpy_default == nullptr || numpy_default == &g_counting || numpy_default == &g_handler) return nullptr;
  if (g_counting.name[0] == '\0') {
    g_default = *numpy_default;
    memcpy(g_counting.name, numpy_default->name, sizeof(g_counting.name));
    g_counting.version = numpy_default->version;
  }
  return &g_counting;
}

NumpyHandler* GuardNumpyHandler(const NumpyHandler* previous) {
  if (previous != nullptr && previous != &g_handler && !g_have_previous) {
    g_previous = *previous;
    g_have_previous = true;
  }
  return &g_handler;
}

}  // namespace host
}  // namespace mate
