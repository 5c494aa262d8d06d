#include "engine/call_mark.h"

#include "engine/gc_watch.h"

namespace mate {
namespace engine {

bool CallMark::Set(Isolate* iso) {
  slot = nullptr;
  const V8Api& v8 = V8();
  if (iso == nullptr || !v8.number_new || !v8.handle_next_address || !v8.handle_limit_address ||
      !v8.isolate_address_from_id)
    return false;
  if (isolate != iso) {
    isolate = iso;
    c_entry_fp_at = v8.isolate_address_from_id(iso, kCEntryFPAddressId);
    next_at = reinterpret_cast<uintptr_t* const*>(v8.handle_next_address(iso));
    limit_at = reinterpret_cast<uintptr_t* const*>(v8.handle_limit_address(iso));
  }
  if (c_entry_fp_at == nullptr || next_at == nullptr || limit_at == nullptr || *c_entry_fp_at == 0) return false;
  // A non-integer: never a small integer, always a fresh heap number.
  const uintptr_t* h = static_cast<const uintptr_t*>(v8.number_new(iso, 0.5));
  if (h == nullptr) return false;
  uintptr_t v = *h;
  // The handle was made in the current block, just below `next`, and holds
  // a heap object (tag bit 1); anything else: no mark.
  if (*next_at != h + 1 || h >= *limit_at || (v & 1) == 0) return false;
  c_entry_fp = *c_entry_fp_at;
  limit = *limit_at;
  value = v;
  gc_count = GCCount();
  slot = h;
  return true;
}

bool CallMark::Holds(Isolate* iso, uint64_t gcs) const {
  // Read in this order: the slot only once its block is known to be the
  // current one and the slot below its next free handle.
  return slot != nullptr && isolate == iso && gc_count == gcs && *c_entry_fp_at == c_entry_fp && *limit_at == limit &&
         slot < *next_at && *slot == value;
}

}  // namespace engine
}  // namespace mate
