#include "native_heap/heap_ops.h"

#include <stdio.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "core/alloc_log.h"
#include "native_heap/foreign_quarantine.h"
#include "native_heap/site_sampler.h"
#include "core/stack_store.h"
#include "platform/loaded_modules.h"
#include "platform/stack_trace.h"

namespace mate {
namespace native_heap {

namespace {

constexpr size_t kFrames = 16;

std::atomic<GuardedAllocator*> g_allocator{nullptr};
// malloc's promise: every block aligned for any type (16 bytes on x86-64
// and aarch64 glibc). Code relies on it (SSE movdqa loads, fontconfig's
// tagged pointers), so no `alignment` setting goes below it here.
constexpr size_t kMallocAlignment = alignof(std::max_align_t);
size_t g_alignment = kMallocAlignment;  // the configured one, never below the promise
uint64_t g_exact_size = 0;              // nativeExactSize: this size is placed byte-exact
uint32_t g_sample_rate = 1;
bool g_log = false;
void (*g_on_new_thread)() = nullptr;
uint32_t (*g_js_stack)() = nullptr;
void (*g_on_bad_free)(const Finding&) = nullptr;
uintptr_t g_own_lo = 0, g_own_hi = 0;    // our own code: left out of captured stacks
uintptr_t g_stop_lo = 0, g_stop_hi = 0;  // the executable: a stack ends at its first frame there

std::atomic<uint64_t> g_guarded{0}, g_unguarded{0}, g_foreign_frees{0}, g_bad_frees{0}, g_routed{0};
// Why allocation calls went to libc, each counted (their sum is g_unguarded).
std::atomic<uint64_t> g_sampled_out{0}, g_reentrant{0}, g_no_slot{0}, g_libc_blocks{0};

std::mutex g_findings_mu;
std::vector<Finding>* g_findings = nullptr;  // never destroyed: frees may come during exit

// Plain data: no constructor or destructor runs for it on any thread.
struct ThreadState {
  uint64_t rng;
  uint32_t countdown;
  bool busy;   // inside a guarded allocation on this thread
  bool ready;  // on_new_thread ran
};
thread_local ThreadState t_state;

// GWP-ASan style: each thread counts down a random gap of mean N.
bool Sampled(ThreadState& t) {
  uint32_t rate = g_sample_rate;
  if (rate <= 1) return true;
  if (t.countdown == 0) {
    if (t.rng == 0) t.rng = reinterpret_cast<uintptr_t>(&t) * 0x9E3779B97F4A7C15ull | 1;
    t.rng ^= t.rng << 13;
    t.rng ^= t.rng >> 7;
    t.rng ^= t.rng << 17;
    t.countdown = 1 + static_cast<uint32_t>(t.rng % (2ull * rate - 1));
  }
  return --t.countdown == 0;
}

// The store, looked up once (its accessor's guard variable is one more
// cold line on every capture).
StackStore* g_store = nullptr;

// Inlined: every frame between the module's call and the unwinder costs an
// unwind step.
__attribute__((always_inline)) inline uint32_t CaptureFrames() {
  uintptr_t pcs[kFrames];
  size_t n = platform::CaptureStack(pcs, kFrames, g_own_lo, g_own_hi, g_stop_lo, g_stop_hi);
  return g_store->InternFrames(pcs, n);
}

// The free's canary check reads the allocation's page from its start up to
// the allocation (tail mode: a small allocation ends where its page ends),
// a page last touched thousands of slot cycles ago (the kept pool reuses
// the slot freed longest ago). Asked for all at once here, its lines
// arrive while the free's stack is captured, where the check's own
// sequential reads would wait for them one stream at a time (measured:
// bench/README.md, native heap). A prefetch never faults; a page-aligned
// pointer (head mode, a page-sized allocation) asks for nothing.
inline void PrefetchCanaryBefore(const void* ptr) {
  constexpr uintptr_t kLine = 64, kPage = 4096;
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  for (uintptr_t line = p & ~(kPage - 1); line < p; line += kLine)
    __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 3);
}

// The chosen modules' code ranges and whether each was seen calling. Filled
// under the native heap's pass lock; `g_caller_count` published last.
constexpr size_t kMaxChosen = 256;
struct ChosenRange {
  uintptr_t base, lo, hi;
  std::atomic<bool> called;
};
ChosenRange g_callers[kMaxChosen];
std::atomic<size_t> g_caller_count{0};

void Record(const Finding& f) {
  std::lock_guard<std::mutex> lock(g_findings_mu);
  if (g_findings == nullptr) g_findings = new std::vector<Finding>();
  g_findings->push_back(f);
}

}  // namespace

uintptr_t g_region_base = 0;
uintptr_t g_region_bytes = 0;

void ConfigureOps(GuardedAllocator* a, const StartOptions& options) {
  g_alignment = a->options().alignment > kMallocAlignment ? a->options().alignment : kMallocAlignment;
  g_exact_size = a->options().native_exact_size;
  g_sample_rate = options.sample_rate ? options.sample_rate : 1;
  // Only sampling leaves calls out: with every call guarded there is nothing to track.
  ConfigureSites(g_sample_rate > 1 ? options.site_first : 0);
  g_log = options.log;
  g_on_new_thread = options.on_new_thread;
  g_js_stack = options.js_stack;
  g_on_bad_free = options.on_bad_free;
  g_store = &StackStore::Get();
  platform::WarmUpStackTrace();
  platform::ObjectRange(reinterpret_cast<const void*>(&ConfigureOps), &g_own_lo, &g_own_hi);
  platform::MainProgramRange(&g_stop_lo, &g_stop_hi);
  g_allocator.store(a, std::memory_order_release);
  g_region_base = a->region_base();
  g_region_bytes = a->region_bytes();
}

void* TryAllocate(size_t size, size_t alignment, const void* site, bool sampled) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) return nullptr;
  ThreadState& t = t_state;
  // A site's first calls are guarded whatever the sample rate (site_sampler.h).
  SiteEntry* first = nullptr;
  if (t.busy || (sampled && g_sample_rate > 1 && !TakeSiteFirst(site, &first) && !Sampled(t))) {
    g_unguarded.fetch_add(1, std::memory_order_relaxed);
    (t.busy ? g_reentrant : g_sampled_out).fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  t.busy = true;
  if (!t.ready) {
    t.ready = true;
    if (g_on_new_thread) g_on_new_thread();
  }
  AllocRequest req;
  req.size = size;
  // malloc's alignment (or the aligned form's own, at least that), except
  // the one size nativeExactSize places byte-exact (a rerun after damage in
  // the tail gap of such an allocation).
  if (alignment == 0) alignment = size == g_exact_size && size != 0 ? 1 : g_alignment;
  else if (alignment < kMallocAlignment) alignment = kMallocAlignment;
  req.alignment = alignment;
  req.frames_id = CaptureFrames();
  // Still busy: what the JS capture allocates through the module is not guarded.
  if (g_js_stack) req.stack_id = g_js_stack();
  req.backend = SlotBackend::kNativeHeap;
  AllocResult r = a->Allocate(req);
  t.busy = false;
  if (r.ptr == nullptr) {
    if (first) SiteTable::Missed(first);
    g_unguarded.fetch_add(1, std::memory_order_relaxed);
    g_no_slot.fetch_add(1, std::memory_order_relaxed);  // the allocator counts its reason too
    return nullptr;
  }
  g_guarded.fetch_add(1, std::memory_order_relaxed);
  if (g_log)
    LogAlloc(r.id, reinterpret_cast<uintptr_t>(r.ptr), size, r.mapped, a->options().mode, "native-heap",
             a->CurrentTest());
  return r.ptr;
}

bool TryFree(void* ptr, From from) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr || !a->InRegion(reinterpret_cast<uintptr_t>(ptr))) {
    // Every free of the process passes the router: counting those would
    // put one shared cache line on every thread's free path.
    if (from == From::kChosen) g_foreign_frees.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  PrefetchCanaryBefore(ptr);
  if (from == From::kElsewhere) g_routed.fetch_add(1, std::memory_order_relaxed);
  FreeRequest req;
  req.ptr = ptr;
  req.by = FreedBy::kExplicit;
  req.frames_id = CaptureFrames();
  req.backend = SlotBackend::kNativeHeap;
  FreeResult r = a->Free(req);
  switch (r.status) {
    case FreeStatus::kFreed:
      if (g_log)
        LogFree(r.record.alloc_id, reinterpret_cast<uintptr_t>(ptr), r.record.size, r.record.mode, "native-heap",
                a->CurrentTest());
      return true;  // canary damage went to the allocator's free sink
    case FreeStatus::kDoubleFree:
    case FreeStatus::kInvalidFree: {
      Finding f;
      f.address = reinterpret_cast<uintptr_t>(ptr);
      f.frames = req.frames_id;
      f.test = a->CurrentTest();
      f.kind = r.status == FreeStatus::kDoubleFree ? FindingKind::kDoubleFree : FindingKind::kInvalidFree;
      f.record = r.record;
      f.has_record = r.record.alloc_id != 0;
      g_bad_frees.fetch_add(1, std::memory_order_relaxed);
      if (g_on_bad_free != nullptr) g_on_bad_free(f);
      else Record(f);
      return true;  // ignored: the program goes on as if the free had not happened
    }
    case FreeStatus::kNotGuarded:
    case FreeStatus::kFailed:  // device only
      break;
  }
  return true;
}

bool TryRealloc(void* ptr, size_t size, void** out, From from) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr || !a->InRegion(reinterpret_cast<uintptr_t>(ptr))) {
    if (from == From::kChosen) g_foreign_frees.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  *out = nullptr;
  size_t old = 0;
  if (!a->LiveSize(ptr, &old) || size == 0) {
    TryFree(ptr, from);  // size 0 frees (glibc); a bad pointer is recorded and ignored
    return true;
  }
  void* fresh = TryAllocate(size, 0, nullptr, false);  // counts itself when it gets no slot
  if (fresh == nullptr) fresh = malloc(size);
  if (fresh == nullptr) return true;  // the old block stays valid, as realloc promises
  memcpy(fresh, ptr, old < size ? old : size);
  TryFree(ptr, from);
  *out = fresh;
  return true;
}

bool TryUsableSize(const void* ptr, size_t* size) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr || !a->InRegion(reinterpret_cast<uintptr_t>(ptr))) return false;
  if (!a->LiveSize(ptr, size)) *size = 0;
  return true;
}

bool CaptureFreeSite(uint32_t* frames, uint32_t* test) {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  if (a == nullptr) return false;
  *frames = CaptureFrames();
  *test = a->CurrentTest();
  return true;
}

uint32_t CurrentTestNow() {
  GuardedAllocator* a = g_allocator.load(std::memory_order_acquire);
  return a ? a->CurrentTest() : 0;
}

void RecordFinding(const Finding& f) { Record(f); }

void RegisterChosenModule(uintptr_t base, uintptr_t lo, uintptr_t hi) {
  size_t n = g_caller_count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; i++) {
    if (g_callers[i].base != base) continue;
    if (g_callers[i].lo != lo || g_callers[i].hi != hi) {  // another module at the same place (unloaded, then loaded)
      g_callers[i].lo = lo;
      g_callers[i].hi = hi;
      g_callers[i].called.store(false, std::memory_order_relaxed);
    }
    return;
  }
  if (n == kMaxChosen) return;
  g_callers[n].base = base;
  g_callers[n].lo = lo;
  g_callers[n].hi = hi;
  g_callers[n].called.store(false, std::memory_order_relaxed);
  g_caller_count.store(n + 1, std::memory_order_release);
}

void NoteCaller(const void* return_address) {
  uintptr_t ra = reinterpret_cast<uintptr_t>(return_address);
  size_t n = g_caller_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++) {
    ChosenRange& c = g_callers[i];
    if (ra < c.lo || ra >= c.hi) continue;
    // Read first: after the first call the line is only ever read.
    if (!c.called.load(std::memory_order_relaxed)) c.called.store(true, std::memory_order_relaxed);
    return;
  }
}

bool MadeAllocationCalls(uintptr_t base) {
  size_t n = g_caller_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++)
    if (g_callers[i].base == base) return g_callers[i].called.load(std::memory_order_relaxed);
  return false;
}

void CountUnguarded() {
  g_unguarded.fetch_add(1, std::memory_order_relaxed);
  g_libc_blocks.fetch_add(1, std::memory_order_relaxed);
}

Counters GetCounters() {
  Counters c;
  c.guarded = g_guarded.load(std::memory_order_relaxed);
  c.unguarded = g_unguarded.load(std::memory_order_relaxed);
  c.foreign_frees = g_foreign_frees.load(std::memory_order_relaxed);
  c.bad_frees = g_bad_frees.load(std::memory_order_relaxed);
  c.routed_frees = g_routed.load(std::memory_order_relaxed);
  c.sampled_out = g_sampled_out.load(std::memory_order_relaxed);
  c.reentrant = g_reentrant.load(std::memory_order_relaxed);
  c.no_slot = g_no_slot.load(std::memory_order_relaxed);
  c.libc_blocks = g_libc_blocks.load(std::memory_order_relaxed);
  return c;
}

std::vector<Finding> TakeFindings() {
  CheckForeignQuarantine();  // its damaged blocks join the findings
  std::vector<Finding> out;
  std::lock_guard<std::mutex> lock(g_findings_mu);
  if (g_findings) out.swap(*g_findings);
  return out;
}

}  // namespace native_heap
}  // namespace mate
