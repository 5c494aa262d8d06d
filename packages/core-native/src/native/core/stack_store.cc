#include "core/stack_store.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

namespace mate {

namespace {
constexpr uint32_t kMaxEntries = 1u << 22;  // ids
constexpr uint32_t kBuckets = 1u << 20;     // hash buckets (power of 2)
constexpr size_t kArenaChunk = 4u << 20;
constexpr uint8_t kString = 1;
constexpr uint8_t kFrames = 2;
constexpr size_t kMaxArenaBytes = 256u << 20;  // entries kept at most; then Intern returns 0

uint64_t Hash(uint8_t kind, const unsigned char* s, size_t n) {
  uint64_t h = 1469598103934665603ull ^ kind;  // FNV-1a
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
}  // namespace

// An entry is a header word (its byte length) followed by the bytes: a
// string with its NUL, or the PCs. Lookups return a pointer past the header.
struct StackStore::Impl {
  std::mutex mu;
  std::atomic<const uint64_t*>* entries;  // id -> header, published after writing
  uint32_t* next_in_bucket;               // id -> next id in the same bucket
  uint64_t* hashes;                       // id -> hash
  uint8_t* kinds;                         // id -> kString / kFrames
  uint32_t* buckets;                      // bucket -> first id
  uint32_t count = 0;                     // ids in use (id 0 is never used)
  char* arena = nullptr;
  size_t arena_left = 0;
  size_t arena_mapped = 0;
};

StackStore& StackStore::Get() {
  static StackStore* store = new StackStore();  // never destroyed: the handler may read it at exit
  return *store;
}

StackStore::StackStore() : impl_(new Impl()) {
  impl_->entries = static_cast<std::atomic<const uint64_t*>*>(MapZeroed(sizeof(void*) * kMaxEntries));
  impl_->next_in_bucket = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) * kMaxEntries));
  impl_->hashes = static_cast<uint64_t*>(MapZeroed(sizeof(uint64_t) * kMaxEntries));
  impl_->kinds = static_cast<uint8_t*>(MapZeroed(kMaxEntries));
  impl_->buckets = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) * kBuckets));
}

uint32_t StackStore::InternBytes(uint8_t kind, const void* data, size_t len) {
  if (len == 0 || impl_->entries == nullptr || impl_->buckets == nullptr || impl_->kinds == nullptr) return 0;
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = Hash(kind, bytes, len);
  uint32_t b = static_cast<uint32_t>(h) & (kBuckets - 1);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (uint32_t id = impl_->buckets[b]; id != 0; id = impl_->next_in_bucket[id]) {
    const uint64_t* e = impl_->entries[id].load(std::memory_order_relaxed);
    if (impl_->hashes[id] == h && impl_->kinds[id] == kind && e[0] == len && memcmp(e + 1, bytes, len) == 0) return id;
  }
  if (impl_->count + 1 >= kMaxEntries) return 0;
  // Header + bytes, rounded to 8 so every entry (and its PCs) stays aligned.
  size_t need = sizeof(uint64_t) + ((len + 7) & ~static_cast<size_t>(7));
  if (impl_->arena_left < need) {
    size_t chunk = need > kArenaChunk ? need : kArenaChunk;
    if (impl_->arena_mapped + chunk > kMaxArenaBytes) return 0;
    impl_->arena_mapped += chunk;
    impl_->arena = static_cast<char*>(MapZeroed(chunk));
    if (impl_->arena == nullptr) {
      impl_->arena_left = 0;
      return 0;
    }
    impl_->arena_left = chunk;
  }
  auto* entry = reinterpret_cast<uint64_t*>(impl_->arena);
  entry[0] = len;
  memcpy(entry + 1, bytes, len);  // the rest of the rounding stays zero (mapped zeroed)
  impl_->arena += need;
  impl_->arena_left -= need;
  uint32_t id = ++impl_->count;
  impl_->hashes[id] = h;
  impl_->kinds[id] = kind;
  impl_->next_in_bucket[id] = impl_->buckets[b];
  impl_->buckets[b] = id;
  impl_->entries[id].store(entry, std::memory_order_release);
  return id;
}

uint32_t StackStore::Intern(const char* text, size_t len) {
  if (len == 0) return 0;
  // Stored with a NUL so Lookup hands out a C string. The NUL is part of
  // the hashed bytes: a string never equals a frames entry anyway (kinds).
  char small[512];
  if (len + 1 <= sizeof(small)) {
    memcpy(small, text, len);
    small[len] = '\0';
    return InternBytes(kString, small, len + 1);
  }
  char* copy = static_cast<char*>(::operator new(len + 1, std::nothrow));
  if (copy == nullptr) return 0;
  memcpy(copy, text, len);
  copy[len] = '\0';
  uint32_t id = InternBytes(kString, copy, len + 1);
  ::operator delete(copy);
  return id;
}

const char* StackStore::Lookup(uint32_t id) const {
  if (id == 0 || id >= kMaxEntries || impl_->entries == nullptr) return nullptr;
  const uint64_t* e = impl_->entries[id].load(std::memory_order_acquire);
  if (e == nullptr || impl_->kinds[id] != kString) return nullptr;
  return reinterpret_cast<const char*>(e + 1);
}

namespace {
// Per-thread memo of recent native stacks: the PCs themselves, so that an
// allocation site seen before costs a hash and a compare of one entry's
// adjacent lines, no lock and no read of the shared store (whose entries,
// ids and kinds are each a dependent load, out of the nearer caches after
// a guarded malloc+free). Plain data, no destructor.
constexpr size_t kMemoEntries = 64;  // power of two
constexpr size_t kMemoFrames = 16;   // longer stacks go to the store each time
struct MemoEntry {
  uint64_t hash;
  uint32_t id;  // 0 = empty
  uint32_t n;
  uintptr_t pcs[kMemoFrames];
};
struct FramesMemo {
  MemoEntry e[kMemoEntries];
};
thread_local FramesMemo t_frames_memo;

uint64_t HashWords(const uintptr_t* pcs, size_t n) {
  uint64_t h = n;
  for (size_t i = 0; i < n; i++) h = (h ^ pcs[i]) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
}  // namespace

uint32_t StackStore::InternFrames(const uintptr_t* pcs, size_t n) {
  if (n == 0) return 0;
  uint64_t h = HashWords(pcs, n);
  MemoEntry& m = t_frames_memo.e[h & (kMemoEntries - 1)];
  if (m.id != 0 && m.hash == h && m.n == n && memcmp(m.pcs, pcs, n * sizeof(uintptr_t)) == 0) return m.id;
  uint32_t id = InternBytes(kFrames, pcs, n * sizeof(uintptr_t));
  if (id != 0 && n <= kMemoFrames) {
    m.hash = h;
    m.id = id;
    m.n = static_cast<uint32_t>(n);
    memcpy(m.pcs, pcs, n * sizeof(uintptr_t));
  }
  return id;
}

size_t StackStore::LookupFrames(uint32_t id, const uintptr_t** pcs) const {
  *pcs = nullptr;
  if (id == 0 || id >= kMaxEntries || impl_->entries == nullptr) return 0;
  const uint64_t* e = impl_->entries[id].load(std::memory_order_acquire);
  if (e == nullptr || impl_->kinds[id] != kFrames) return 0;
  *pcs = reinterpret_cast<const uintptr_t*>(e + 1);
  return static_cast<size_t>(e[0] / sizeof(uintptr_t));
}

}  // namespace mate
