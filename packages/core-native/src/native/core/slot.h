#ifndef MATE_CORE_SLOT_H_
#define MATE_CORE_SLOT_H_

#include <cstdint>

#include "core/mode.h"

namespace mate {

enum class SlotState : uint8_t {
  kNever = 0,        // record not in use
  kLive = 1,         // handed out
  kQuarantined = 2,  // freed, inaccessible, not reusable yet
  kReusable = 3,     // freed, inaccessible, waiting for a same-sized request
};

enum class FreedBy : uint8_t { kNotFreed = 0, kExplicit = 1, kGarbageCollector = 2 };

// Who asked for the memory: JS buffers (host), a chosen module's native
// heap (malloc/new redirected) or CUDA device memory; the report's
// `backend` field.
enum class SlotBackend : uint8_t { kHost = 0, kNativeHeap = 1, kCuda = 2 };

inline const char* SlotBackendName(SlotBackend b) {
  return b == SlotBackend::kNativeHeap ? "native-heap" : b == SlotBackend::kCuda ? "cuda" : "host";
}

// One page-aligned slot: data pages plus one guard page. Plain data so the
// crash handler can read it without locks.
struct SlotRecord {
  uintptr_t slot_start;  // first page of the slot
  uintptr_t user;        // pointer handed out
  uint64_t size;         // requested bytes
  uint64_t alloc_id;     // allocation number, 1-based, process-wide
  uint32_t data_pages;   // pages besides the guard page
  uint32_t alloc_stack;  // StackStore id, 0 = none
  uint32_t free_stack;   // StackStore id, 0 = none
  uint32_t alloc_test;   // StackStore id of the test name, 0 = none
  uint32_t free_test;
  uint32_t alloc_frames;  // StackStore frames id (native PCs), 0 = none
  uint32_t free_frames;
  uint16_t alignment;
  Mode mode;
  FreedBy freed_by;
  uint8_t state;            // SlotState, read and written with __atomic builtins
  uint8_t canary_reported;  // a canary violation of this allocation was reported
  SlotBackend backend;
  // A kept slot (native one-page allocations): its page stays mapped while
  // closed (PROT_NONE in its own mapping), so reuse needs no page fault.
  uint8_t kept;
  // A kept slot freed and queued for reuse whose free has not closed it
  // yet: not taken until it has (atomic, __atomic builtins).
  uint8_t closing;
  // A freed kept slot whose page is all canary but the freed allocation's
  // own bytes (checked at the free, closed since): the next allocation
  // there refills only those bytes, not the whole (by then cold) page.
  uint8_t canary_intact;
  // A kept slot closed with a guard marker (keptClose): its page was given
  // back; opening removes the marker and the page comes back zero.
  uint8_t closed_by_marker;
};

// Where everything of a slot lies; derived, never stored.
struct SlotGeometry {
  uintptr_t data_start, data_end;    // data pages
  uintptr_t guard_start, guard_end;  // the guard page
  uintptr_t user, user_end;          // logical allocation
  // Canary ranges: before the start and after the end (either may be empty).
  uintptr_t canary_before_start, canary_before_end;
  uintptr_t canary_after_start, canary_after_end;
};

SlotGeometry GeometryOf(const SlotRecord& r, uintptr_t page);

inline SlotState LoadState(const SlotRecord& r) {
  return static_cast<SlotState>(__atomic_load_n(&r.state, __ATOMIC_ACQUIRE));
}
inline void StoreState(SlotRecord* r, SlotState s) {
  __atomic_store_n(&r->state, static_cast<uint8_t>(s), __ATOMIC_RELEASE);
}

}  // namespace mate

#endif  // MATE_CORE_SLOT_H_
