#include "core/canary.h"

#include <cstring>

namespace mate {

namespace {

// A page of canary bytes to compare against: memcmp is vectorized.
struct CanaryBlock {
  unsigned char bytes[4096];
  CanaryBlock() { memset(bytes, kCanaryByte, sizeof(bytes)); }
};
const CanaryBlock g_block;

// Fast path: whole blocks at once; the slow loops only run on damage.
bool AllCanary(uintptr_t start, uintptr_t end) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(start);
  const unsigned char* e = reinterpret_cast<const unsigned char*>(end);
  while (p < e) {
    size_t n = static_cast<size_t>(e - p) < sizeof(g_block.bytes) ? static_cast<size_t>(e - p) : sizeof(g_block.bytes);
    if (memcmp(p, g_block.bytes, n) != 0) return false;
    p += n;
  }
  return true;
}
}  // namespace

void FillCanary(const SlotGeometry& g) {
  if (g.canary_before_end > g.canary_before_start)
    memset(reinterpret_cast<void*>(g.canary_before_start), kCanaryByte, g.canary_before_end - g.canary_before_start);
  if (g.canary_after_end > g.canary_after_start)
    memset(reinterpret_cast<void*>(g.canary_after_start), kCanaryByte, g.canary_after_end - g.canary_after_start);
}

void FillPage(void* start, size_t bytes) { memset(start, kCanaryByte, bytes); }

bool NearCanaryIntact(const SlotGeometry& g, uint64_t bytes) {
  uintptr_t before =
      g.canary_before_end - g.canary_before_start > bytes ? g.canary_before_end - bytes : g.canary_before_start;
  uintptr_t after =
      g.canary_after_end - g.canary_after_start > bytes ? g.canary_after_start + bytes : g.canary_after_end;
  return AllCanary(before, g.canary_before_end) && AllCanary(g.canary_after_start, after);
}

CanaryDamage CheckCanary(const SlotGeometry& g) {
  CanaryDamage d;
  if (!AllCanary(g.canary_before_start, g.canary_before_end)) {
    // Walk outward from the start of the data.
    for (uintptr_t a = g.canary_before_end; a > g.canary_before_start; a--) {
      if (*reinterpret_cast<const unsigned char*>(a - 1) == kCanaryByte) continue;
      uint64_t dist = g.user - (a - 1);
      d.before.damaged_bytes++;
      if (d.before.nearest == 0) d.before.nearest = dist;
      d.before.farthest = dist;
    }
  }
  if (!AllCanary(g.canary_after_start, g.canary_after_end)) {
    for (uintptr_t a = g.canary_after_start; a < g.canary_after_end; a++) {
      if (*reinterpret_cast<const unsigned char*>(a) == kCanaryByte) continue;
      uint64_t dist = a - g.user_end + 1;
      d.after.damaged_bytes++;
      if (d.after.nearest == 0) d.after.nearest = dist;
      d.after.farthest = dist;
    }
  }
  return d;
}

}  // namespace mate
