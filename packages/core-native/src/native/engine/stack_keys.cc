#include "engine/stack_keys.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "engine/v8_symbols.h"

namespace mate {
namespace engine {

namespace {
std::atomic<uint32_t> g_frame_limit{12};
// Marks the microtask clock in a key; user-space code addresses never have
// the top bit set.
constexpr uintptr_t kClockTag = uintptr_t{1} << 63;
// Ends a key for the text of the frames without their async tail (no clock
// reaches it).
constexpr uintptr_t kSyncPartTag = ~uintptr_t{0};

thread_local std::unique_ptr<StackKeys> t_keys;

uint64_t HashFrames(const uintptr_t* f, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h ^= f[i];
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

// The count of microtasks the running context's queue has finished: it
// stays the same while one microtask runs and only ever grows.
uintptr_t MicrotaskClock(Isolate* isolate, uintptr_t* queue_out) {
  const V8Api& v8 = V8();
  *queue_out = 0;
  Local context = v8.entered_or_microtask_context(isolate);
  if (context == nullptr) return 0;
  void* queue = v8.context_microtask_queue(context);
  if (queue == nullptr) return 0;
  *queue_out = reinterpret_cast<uintptr_t>(queue);
  return static_cast<uintptr_t>(
      *reinterpret_cast<const intptr_t*>(static_cast<const char*>(queue) + v8.finished_microtask_count_offset));
}
}  // namespace

void StackKeys::SetFrameLimit(uint32_t frames) {
  if (frames < 1) frames = 1;
  if (frames > kMaxFrames) frames = kMaxFrames;
  g_frame_limit.store(frames, std::memory_order_relaxed);
}

uint32_t StackKeys::FrameLimit() { return g_frame_limit.load(std::memory_order_relaxed); }

StackKeys::StackKeys() {
  void* p = mmap(nullptr, sizeof(Key) * kSlots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  table_ = p == MAP_FAILED ? nullptr : static_cast<Key*>(p);
  memset(pending_, 0, sizeof(pending_));
  get_current_ = V8().get_current;
}

StackKeys* StackKeys::ForThisThread() {
  StackKeys* k = t_keys.get();
  // Once made (where V8's sampler is there), the keys carry the one entry
  // point every call needs: no other lookup on the way (a native
  // allocation's path, bench/README.md).
  if (k != nullptr) {
    Isolate* isolate = k->get_current_();
    if (isolate != nullptr && isolate == k->isolate_) return k;
  }
  if (!HasStackSampling()) return nullptr;
  Isolate* isolate = V8().get_current();
  if (isolate == nullptr) return nullptr;
  if (k == nullptr) {
    t_keys.reset(new StackKeys());
    k = t_keys.get();
    if (k->table_ == nullptr) {
      t_keys.reset();
      return nullptr;
    }
  }
  if (k->isolate_ != isolate) {
    // First use on this isolate: every full GC from now on ends an epoch.
    k->isolate_ = isolate;
    k->epoch_++;
    k->walker_.reset(new FrameWalker(isolate));
    V8().add_gc_prologue_callback(isolate, reinterpret_cast<GCCallback>(&StackKeys::OnFullGC), k,
                                  kGCTypeMarkSweepCompact | kGCTypeMinorMarkCompact);
  }
  return k;
}

void StackKeys::OnFullGC(void* /*isolate*/, int /*gc_type*/, int /*flags*/, void* data) {
  static_cast<StackKeys*>(data)->epoch_++;
}

__attribute__((noinline)) size_t StackKeys::Sample(uintptr_t* frames, size_t limit) {
  RegisterState regs;
  // Not in V8's code: the sampler starts from the exit frame of this call.
  regs.sp = __builtin_frame_address(0);
  regs.fp = __builtin_frame_address(0);
  SampleInfo info;
  V8().get_stack_sample(static_cast<Isolate*>(isolate_), regs, reinterpret_cast<void**>(frames), limit, &info);
  return info.frames_count <= limit ? info.frames_count : 0;
}

size_t StackKeys::Frames(uintptr_t* frames, size_t limit, bool* from_walker) {
  *from_walker = false;
  int walked = walker_ && walker_->usable() ? walker_->Walk(frames, limit) : FrameWalker::kUnsupported;
  if (walked >= 0) {
    *from_walker = true;
    return static_cast<size_t>(walked);
  }
  v8_samples_++;
  size_t n = Sample(frames, limit);
  if (walked == FrameWalker::kUnknown) walker_->Learn(frames, n, limit);
  return n;
}

uint32_t StackKeys::Lookup(int32_t* token) {
  *token = -1;
  uint32_t limit = g_frame_limit.load(std::memory_order_relaxed);
  Key key;
  key.queue = 0;
  bool from_walker = false;
  size_t raw = Frames(key.frames, limit, &from_walker);
  for (int attempt = 0; attempt < 2; attempt++) {
    size_t n = raw;
    if (n == 0) return 0;
    // The bottom of the stack was reached: async frames may follow in the text.
    if (n < limit) key.frames[n++] = kClockTag | MicrotaskClock(static_cast<Isolate*>(isolate_), &key.queue);
    key.n = static_cast<uint32_t>(n);
    key.hash = HashFrames(key.frames, n);
    key.epoch = epoch_;
    if (uint32_t id = Find(key)) {
      hits_++;
      return id;
    }
    if (!from_walker) break;
    // A new key from the walker: it must be exactly V8's own sample.
    uintptr_t check[kMaxFrames + 1];
    v8_samples_++;
    size_t m = Sample(check, limit);
    if (FrameWalker::SameAsV8(key.frames, raw, check, m)) break;
    walker_->Disable();
    memcpy(key.frames, check, m * sizeof(uintptr_t));
    raw = m;
    from_walker = false;
  }
  misses_++;
  uint32_t slot = pending_seq_ % kPending;
  pending_seq_ = (pending_seq_ + 1) & 0x0FFFFFFF;
  if (pending_seq_ == 0) pending_seq_ = 1;  // 0 marks a used slot
  Key& p = pending_[slot];
  memcpy(&p, &key, offsetof(Key, frames) + key.n * sizeof(uintptr_t));
  p.seq = pending_seq_;
  *token = static_cast<int32_t>((p.seq << 3) | slot);
  return 0;
}

uint32_t StackKeys::Find(const Key& key) const {
  const Key& e = table_[key.hash & (kSlots - 1)];
  if (e.stack_id != 0 && e.hash == key.hash && e.epoch == epoch_ && e.n == key.n &&
      memcmp(e.frames, key.frames, key.n * sizeof(uintptr_t)) == 0)
    return e.stack_id;
  return 0;
}

void StackKeys::Store(const Key& key, uint32_t stack_id) {
  Key& e = table_[key.hash & (kSlots - 1)];
  memcpy(&e, &key, offsetof(Key, frames) + key.n * sizeof(uintptr_t));
  e.seq = 0;
  e.stack_id = stack_id;
}

StackKeys::Key* StackKeys::Pending(int32_t token) {
  if (token < 0) return nullptr;
  Key& p = pending_[static_cast<uint32_t>(token) & (kPending - 1)];
  // Stale tokens (the slot was reused by later misses) and keys of an
  // epoch that ended meanwhile are dropped: the next allocation there
  // simply misses again.
  if (p.seq != (static_cast<uint32_t>(token) >> 3) || p.epoch != epoch_) return nullptr;
  return &p;
}

void StackKeys::Bind(int32_t token, uint32_t stack_id) {
  Key* p = stack_id != 0 ? Pending(token) : nullptr;
  if (p == nullptr) return;
  Store(*p, stack_id);
  p->seq = 0;
}

bool StackKeys::EndsInClock(const Key& p) {
  if (p.n == 0 || p.queue == 0) return false;
  uintptr_t last = p.frames[p.n - 1];
  return (last & kClockTag) != 0 && last != kSyncPartTag;
}

bool StackKeys::AsyncMiss(int32_t token, uintptr_t* queue, uintptr_t* clock) {
  const Key* p = Pending(token);
  if (p == nullptr || !EndsInClock(*p)) return false;
  *queue = p->queue;
  *clock = p->frames[p->n - 1] & ~kClockTag;
  return true;
}

bool StackKeys::SyncKey(int32_t token, Key* out) {
  const Key* p = Pending(token);
  if (p == nullptr || !EndsInClock(*p)) return false;
  memcpy(out, p, offsetof(Key, frames) + p->n * sizeof(uintptr_t));
  out->frames[out->n - 1] = kSyncPartTag;
  out->hash = HashFrames(out->frames, out->n);
  out->queue = 0;
  return true;
}

uint32_t StackKeys::SyncPart(int32_t token) {
  Key key;
  return SyncKey(token, &key) ? Find(key) : 0;
}

void StackKeys::BindSyncPart(int32_t token, uint32_t head_id) {
  Key key;
  if (head_id != 0 && SyncKey(token, &key)) Store(key, head_id);
}

}  // namespace engine
}  // namespace mate
