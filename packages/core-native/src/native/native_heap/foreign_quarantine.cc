#include "native_heap/foreign_quarantine.h"

#include <malloc.h>
#include <sched.h>
#include <string.h>

#include <atomic>

#include "native_heap/heap_ops.h"
#include "native_heap/native_heap.h"

namespace mate {
namespace native_heap {

namespace {

// The fill: a byte no zeroing, no ASCII text and no small integer writes.
constexpr unsigned char kFill = 0xfb;
constexpr uint64_t kFillWord = 0xfbfbfbfbfbfbfbfbull;

// Fixed storage: holding a block never allocates (the free path of a
// chosen module must not re-enter malloc).
constexpr uint64_t kDefaultBytes = 4ull << 20;
constexpr uint32_t kDefaultCount = 1024;
// One more than the count bound: a hold stores before it evicts.
constexpr uint32_t kCapacity = kDefaultCount + 1;

struct Held {
  void* ptr;
  size_t bytes;  // filled bytes: malloc_usable_size's
  ReleaseFn release;
  size_t size_arg, alignment;
  uint32_t frames, test;
};

Held g_ring[kCapacity];
uint32_t g_head = 0, g_count = 0;  // under g_lock
uint64_t g_bytes = 0;

std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
uint64_t g_max_bytes = 0;  // 0: off
uint32_t g_max_count = 0;
size_t g_max_block = 0;
bool g_deletes = false;

std::atomic<uint64_t> g_held{0}, g_at_once{0}, g_written{0};

// Bounded: a child forked while another thread held the lock inherits it
// held forever; its checks then skip rather than hang.
bool Lock() {
  for (int i = 0; i < 100000; i++) {
    if (!g_lock.test_and_set(std::memory_order_acquire)) return true;
    sched_yield();
  }
  return false;
}
void Unlock() { g_lock.clear(std::memory_order_release); }

// Offset of the first byte that is not the fill, or `n` when none.
size_t FirstWritten(const unsigned char* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (w != kFillWord) break;
  }
  for (; i < n; i++)
    if (p[i] != kFill) return i;
  return n;
}

// Checks a block leaving the quarantine, records a write after its free.
void CheckAndRelease(const Held& h) {
  size_t at = FirstWritten(static_cast<const unsigned char*>(h.ptr), h.bytes);
  if (at < h.bytes) {
    Finding f;
    f.kind = FindingKind::kForeignWriteAfterFree;
    f.address = reinterpret_cast<uintptr_t>(h.ptr) + at;
    f.record.user = reinterpret_cast<uintptr_t>(h.ptr);
    f.record.slot_start = f.record.user;
    f.record.size = h.bytes;
    f.record.free_frames = h.frames;
    f.record.free_test = h.test;
    f.record.freed_by = FreedBy::kExplicit;
    f.record.backend = SlotBackend::kNativeHeap;
    f.has_record = true;
    f.frames = h.frames;
    f.test = CurrentTestNow();
    g_written.fetch_add(1, std::memory_order_relaxed);
    RecordFinding(f);
  }
  h.release(h.ptr, h.size_arg, h.alignment);
}

}  // namespace

void ConfigureForeignQuarantine(uint64_t max_bytes, uint32_t max_count, bool deletes) {
  g_max_bytes = max_bytes < kDefaultBytes ? max_bytes : kDefaultBytes;
  g_max_count = max_count < kDefaultCount ? max_count : kDefaultCount;
  if (g_max_count == 0) g_max_bytes = 0;
  g_max_block = g_max_bytes / 16;
  g_deletes = deletes;
}

void HoldForeign(void* ptr, ReleaseFn release, size_t size_arg, size_t alignment, bool is_delete) {
  if (g_max_bytes == 0 || (is_delete && !g_deletes)) return release(ptr, size_arg, alignment);
  size_t bytes = malloc_usable_size(ptr);
  if (bytes == 0 || bytes > g_max_block) {
    g_at_once.fetch_add(1, std::memory_order_relaxed);
    return release(ptr, size_arg, alignment);
  }
  Held h{ptr, bytes, release, size_arg, alignment, 0, 0};
  CaptureFreeSite(&h.frames, &h.test);
  memset(ptr, kFill, bytes);
  // One try: a free interrupting the holder (a signal handler) or racing
  // a check releases at once rather than wait.
  if (g_lock.test_and_set(std::memory_order_acquire)) {
    g_at_once.fetch_add(1, std::memory_order_relaxed);
    return release(ptr, size_arg, alignment);
  }
  g_ring[(g_head + g_count) % kCapacity] = h;
  g_count++;
  g_bytes += bytes;
  g_held.fetch_add(1, std::memory_order_relaxed);
  // The oldest leave first; checked and released outside the lock.
  for (;;) {
    Held out[32];
    uint32_t n = 0;
    while (n < 32 && g_count > 0 && (g_count > g_max_count || g_bytes > g_max_bytes)) {
      out[n++] = g_ring[g_head];
      g_bytes -= g_ring[g_head].bytes;
      g_head = (g_head + 1) % kCapacity;
      g_count--;
    }
    Unlock();
    for (uint32_t i = 0; i < n; i++) CheckAndRelease(out[i]);
    if (n < 32 || !Lock()) return;  // not locked: the rest leave at the next hold
  }
}

void CheckForeignQuarantine() {
  if (g_max_bytes == 0 || !Lock()) return;
  // Damaged blocks are reported once and leave; the others stay, in order.
  uint32_t kept = 0;
  for (uint32_t i = 0; i < g_count; i++) {
    const Held& h = g_ring[(g_head + i) % kCapacity];
    if (FirstWritten(static_cast<const unsigned char*>(h.ptr), h.bytes) < h.bytes) {
      g_bytes -= h.bytes;
      CheckAndRelease(h);  // releasing here cannot come back: only a chosen module's free holds
      continue;
    }
    g_ring[(g_head + kept) % kCapacity] = h;
    kept++;
  }
  g_count = kept;
  Unlock();
}

ForeignCounters GetForeignCounters() {
  ForeignCounters c;
  c.held = g_held.load(std::memory_order_relaxed);
  c.released_at_once = g_at_once.load(std::memory_order_relaxed);
  c.written = g_written.load(std::memory_order_relaxed);
  if (!Lock()) return c;
  c.held_now = g_count;
  c.bytes_now = g_bytes;
  Unlock();
  return c;
}

}  // namespace native_heap
}  // namespace mate
