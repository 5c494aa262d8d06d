#ifndef MATE_NATIVE_HEAP_HEAP_OPS_H_
#define MATE_NATIVE_HEAP_HEAP_OPS_H_

#include <cstddef>
#include <cstdint>

#include "core/guarded_allocator.h"
#include "native_heap/native_heap.h"

// The guarded side of every replacement: each answers whether it handled
// the call; when it did not, the replacement calls libc (or libstdc++).
namespace mate {
namespace native_heap {

void ConfigureOps(GuardedAllocator* a, const StartOptions& options);

// A guarded slot for this call, or nullptr (sampled out, no slot, or
// re-entered): then the caller allocates from libc. `alignment` 0 is
// malloc's: the configured one, never below malloc's 16-byte promise.
// `site`: the module's return address (its first calls are guarded while
// sampling). `sampled` false skips sampling (realloc of a guarded block).
void* TryAllocate(size_t size, size_t alignment, const void* site, bool sampled = true);

// An allocation call of a chosen module that went to libc anyway (realloc
// of a block libc made): counted so that guarded + unguarded = every
// allocation call.
void CountUnguarded();

// Which chosen modules made allocation calls mate-guard saw: a module
// whose calls never come through its imports (a Rust addon with its own
// allocator) is named at the end of the run. Registered at patch time (one
// writer: the patch pass); read on every allocation call.
void RegisterChosenModule(uintptr_t base, uintptr_t lo, uintptr_t hi);
// The return address of a replacement: marks the module it lies in, once.
void NoteCaller(const void* return_address);
// Whether the module loaded at `base` made an allocation call (false when unknown).
bool MadeAllocationCalls(uintptr_t base);

// The guarded region, for the free router's first test: set once when the
// native heap starts (the region never moves), zero before.
extern uintptr_t g_region_base;
extern uintptr_t g_region_bytes;
// Whether `p` may be ours: one subtraction and compare, no allocator access.
inline bool InGuardedRegion(const void* p) { return reinterpret_cast<uintptr_t>(p) - g_region_base < g_region_bytes; }

// Who calls: a chosen module's redirected import, or the process-wide free
// router (any other module; its frees of other pointers are not counted).
enum class From : uint8_t { kChosen, kElsewhere };

// True when `ptr` lies in the guarded region: freed, or found to be a bad
// free (recorded, ignored). False: not ours, the caller gives it to libc.
bool TryFree(void* ptr, From from = From::kChosen);

// realloc of a pointer in the guarded region: true and *out set (nullptr
// after a bad free or for size 0). False: not ours.
bool TryRealloc(void* ptr, size_t size, void** out, From from = From::kChosen);

// malloc_usable_size: the requested size of a live guarded allocation (0
// for a bad pointer in the region). False: not ours.
bool TryUsableSize(const void* ptr, size_t* size);

// A free's site for the foreign quarantine: its native frames (interned)
// and the test running. False before the native heap starts.
bool CaptureFreeSite(uint32_t* frames, uint32_t* test);
// The test running now (0: none or not started).
uint32_t CurrentTestNow();
// Keeps a finding for the next check (any thread; not in a signal handler).
void RecordFinding(const Finding& f);

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_HEAP_OPS_H_
