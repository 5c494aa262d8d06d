#ifndef MATE_NATIVE_HEAP_FOREIGN_QUARANTINE_H_
#define MATE_NATIVE_HEAP_FOREIGN_QUARANTINE_H_

#include <cstddef>
#include <cstdint>

// Memory a chosen module frees that it did not get from the guard (libc's
// malloc called by another library, node's operator new serving a C++
// template node exports): it cannot fault, so it is held instead of being
// released at once. Filled with a pattern when held and checked when
// released (evicted by the bounds, at a check, at exit), so a write after
// the free is reported as heap-use-after-free (WRITE) with the free site.
// A read leaves no trace and is not seen.
//
// Never touched by the fault path (a signal handler): a free takes the
// lock with one try and releases at once when it is busy, so an
// interrupted holder can never deadlock it.
namespace mate {
namespace native_heap {

// How a held block goes back to its allocator: the same call the module
// made (free, or the same form of operator delete with its arguments).
using ReleaseFn = void (*)(void* ptr, size_t size, size_t alignment);

// Bounds: at most `max_count` blocks and `max_bytes` bytes held (0 turns it
// off); a block over a sixteenth of `max_bytes` is released at once.
// `deletes`: whether operator delete's memory may be held (only when the
// process's operator new is libstdc++'s, which takes it from malloc, so
// malloc_usable_size may measure it).
void ConfigureForeignQuarantine(uint64_t max_bytes, uint32_t max_count, bool deletes);

// Holds `ptr` (filled, with the free's native frames and test) or, when
// it cannot (off, too large, busy, unknown size), releases it at once
// through `release(ptr, size_arg, alignment)`. `is_delete`: it came from an
// operator delete.
void HoldForeign(void* ptr, ReleaseFn release, size_t size_arg, size_t alignment, bool is_delete);

// Checks every held block; damaged ones are recorded (native_heap.h
// Finding kForeignWriteAfterFree) and released. Not async-signal-safe.
void CheckForeignQuarantine();

struct ForeignCounters {
  uint64_t held = 0;              // blocks held since the start
  uint64_t held_now = 0;          // blocks held now
  uint64_t bytes_now = 0;         // their bytes
  uint64_t released_at_once = 0;  // frees it could not hold: too large, unmeasurable, lock busy (not counted while off:
                                  // no shared write on that path)
  uint64_t written = 0;           // held blocks found written after their free
};
ForeignCounters GetForeignCounters();

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_FOREIGN_QUARANTINE_H_
