#ifndef MATE_CORE_CANARY_H_
#define MATE_CORE_CANARY_H_

#include <cstddef>
#include <cstdint>

#include "core/slot.h"

namespace mate {

constexpr uint8_t kCanaryByte = 0xCB;

// Damage on one side of an allocation. Distances are 1-based from the
// allocation's edge: the byte just before the start is 1 byte before it.
struct CanarySide {
  uint64_t damaged_bytes = 0;
  uint64_t nearest = 0;   // closest damaged byte to the data
  uint64_t farthest = 0;  // farthest damaged byte from the data
};

struct CanaryDamage {
  CanarySide before;  // slack before the start
  CanarySide after;   // slack after the end (alignment gap in tail mode)
  bool any() const { return before.damaged_bytes != 0 || after.damaged_bytes != 0; }
};

void FillCanary(const SlotGeometry& g);
// Fills whole pages with canary bytes (slots prepared ahead of need).
void FillPage(void* start, size_t bytes);
CanaryDamage CheckCanary(const SlotGeometry& g);
// Whether the `bytes` canary bytes nearest the data on each side are
// intact: where an overrun or underrun lands first, read in a cache line
// or two instead of the whole slack (up to a page a side).
bool NearCanaryIntact(const SlotGeometry& g, uint64_t bytes);

}  // namespace mate

#endif  // MATE_CORE_CANARY_H_
