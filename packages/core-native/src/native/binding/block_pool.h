#ifndef MATE_BINDING_BLOCK_POOL_H_
#define MATE_BINDING_BLOCK_POOL_H_

#include <atomic>
#include <cstddef>
#include <new>

namespace mate {

// Blocks of one size kept for reuse, for the shared_ptr control block that
// every guarded JS buffer's backing store needs. A GC frees thousands of
// buffers in one pause and the next allocations take as many again: past
// malloc's per-thread cache (7 blocks a size) each of those went through
// the arena's lock and bins, or a consolidation. Here it is a push and a
// pop under a spin lock (taken by the JS thread, and the GC releasing on
// it, almost never at once). Any thread may take or give a block. At most
// kKeep blocks are kept (`kKeep * kSize` bytes); the rest go back to
// malloc. The pool itself is never destroyed, so a buffer released at
// process exit still finds it.
template <size_t kSize, size_t kKeep>
class BlockPool {
 public:
  static void* Take() {
    State& s = Get();
    s.Lock();
    void* p = s.count ? s.blocks[--s.count] : nullptr;
    s.Unlock();
    return p ? p : ::operator new(kSize);
  }

  static void Give(void* p) {
    State& s = Get();
    s.Lock();
    bool kept = s.count < kKeep;
    if (kept) s.blocks[s.count++] = p;
    s.Unlock();
    if (!kept) ::operator delete(p);
  }

 private:
  struct State {
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    size_t count = 0;
    void* blocks[kKeep];
    void Lock() {
      while (busy.test_and_set(std::memory_order_acquire)) {
      }
    }
    void Unlock() { busy.clear(std::memory_order_release); }
  };
  static State& Get() {
    static State* s = new State();  // never destroyed (see above)
    return *s;
  }
};

// A std allocator over BlockPool for single objects of T (a shared_ptr's
// control block); arrays go to the global allocator.
template <typename T, size_t kKeep>
struct PooledAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = PooledAllocator<U, kKeep>;
  };
  PooledAllocator() = default;
  template <typename U>
  PooledAllocator(const PooledAllocator<U, kKeep>&) {}  // NOLINT: converting, as std allocators are
  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(BlockPool<sizeof(T), kKeep>::Take());
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) return ::operator delete(p);
    BlockPool<sizeof(T), kKeep>::Give(p);
  }
  template <typename U>
  bool operator==(const PooledAllocator<U, kKeep>&) const { return true; }
  template <typename U>
  bool operator!=(const PooledAllocator<U, kKeep>&) const { return false; }
};

}  // namespace mate

#endif  // MATE_BINDING_BLOCK_POOL_H_
