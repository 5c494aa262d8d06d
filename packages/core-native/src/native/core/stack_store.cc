#include "core/stack_store.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

namespace mate {

namespace {
constexpr uint32_t kMaxEntries = 1u << 22;       // ids
constexpr uint32_t kBuckets = 1u << 20;          // hash buckets (power of 2)
constexpr size_t kArenaChunk = 4u << 20;
constexpr size_t kMaxArenaBytes = 256u << 20;  // text kept at most; then Intern returns 0

uint64_t Hash(const char* s, size_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
  return h;
}

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
}  // namespace

struct StackStore::Impl {
  std::mutex mu;
  std::atomic<const char*>* strings;  // id -> text, published after writing
  uint32_t* next_in_bucket;           // id -> next id in the same bucket
  uint64_t* hashes;                   // id -> hash
  uint32_t* buckets;                  // bucket -> first id
  uint32_t count = 0;                 // ids in use (id 0 is never used)
  char* arena = nullptr;
  size_t arena_left = 0;
  size_t arena_mapped = 0;
};

StackStore& StackStore::Get() {
  static StackStore* store = new StackStore();  // never destroyed: the handler may read it at exit
  return *store;
}

StackStore::StackStore() : impl_(new Impl()) {
  impl_->strings = static_cast<std::atomic<const char*>*>(MapZeroed(sizeof(const char*) * kMaxEntries));
  impl_->next_in_bucket = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) * kMaxEntries));
  impl_->hashes = static_cast<uint64_t*>(MapZeroed(sizeof(uint64_t) * kMaxEntries));
  impl_->buckets = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) * kBuckets));
}

uint32_t StackStore::Intern(const char* text, size_t len) {
  if (len == 0 || impl_->strings == nullptr || impl_->buckets == nullptr) return 0;
  uint64_t h = Hash(text, len);
  uint32_t b = static_cast<uint32_t>(h) & (kBuckets - 1);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (uint32_t id = impl_->buckets[b]; id != 0; id = impl_->next_in_bucket[id]) {
    const char* s = impl_->strings[id].load(std::memory_order_relaxed);
    if (impl_->hashes[id] == h && strncmp(s, text, len) == 0 && s[len] == '\0') return id;
  }
  if (impl_->count + 1 >= kMaxEntries) return 0;
  if (impl_->arena_left < len + 1) {
    size_t chunk = len + 1 > kArenaChunk ? len + 1 : kArenaChunk;
    if (impl_->arena_mapped + chunk > kMaxArenaBytes) return 0;
    impl_->arena_mapped += chunk;
    impl_->arena = static_cast<char*>(MapZeroed(chunk));
    if (impl_->arena == nullptr) { impl_->arena_left = 0; return 0; }
    impl_->arena_left = chunk;
  }
  char* copy = impl_->arena;
  memcpy(copy, text, len);
  copy[len] = '\0';
  impl_->arena += len + 1;
  impl_->arena_left -= len + 1;
  uint32_t id = ++impl_->count;
  impl_->hashes[id] = h;
  impl_->next_in_bucket[id] = impl_->buckets[b];
  impl_->buckets[b] = id;
  impl_->strings[id].store(copy, std::memory_order_release);
  return id;
}

const char* StackStore::Lookup(uint32_t id) const {
  if (id == 0 || id >= kMaxEntries || impl_->strings == nullptr) return nullptr;
  return impl_->strings[id].load(std::memory_order_acquire);
}

}  // namespace mate
