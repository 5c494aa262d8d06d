#ifndef MATE_CRASH_VIOLATION_H_
#define MATE_CRASH_VIOLATION_H_

#include <cstdint>

#include "core/canary.h"
#include "core/slot.h"

namespace mate {

enum class Relation : uint8_t { kPastEnd, kBeforeStart, kInside };

// Everything a report says, gathered before any text is written. Plain data:
// built in the signal handler as well as on the free path.
struct Violation {
  const char* kind = "";          // heap-buffer-overflow, canary-corruption, double-free, ...
  const char* access = nullptr;   // READ / WRITE / nullptr (canary damage)
  uintptr_t address = 0;          // faulting address, 0 for canary damage
  Relation relation = Relation::kPastEnd;
  uint64_t distance = 0;          // bytes past the end / before the start / offset inside
  SlotRecord record{};
  SlotGeometry geometry{};
  CanaryDamage damage{};          // canary-corruption only
  const char* backend = "host";  // the record's: host / native-heap
  uint32_t frames = 0;            // StackStore frames of the event itself (the bad free), 0 = none
  bool has_record = true;         // invalid free of a pointer that is no allocation's: false
  const char* guard_method = "";  // madvise-guard / mprotect
  uint32_t test_id = 0;           // test running when it was found
  int signal = 0;                 // non-zero when the process dies by it
  uint64_t page_size = 4096;
  // The process's counters when it was found (for the run summary when the
  // process dies before it can write them).
  uint64_t process_allocations = 0, process_peak_live = 0, process_fallbacks = 0;
};

}  // namespace mate

#endif  // MATE_CRASH_VIOLATION_H_
