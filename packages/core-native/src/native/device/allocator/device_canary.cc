// Canary windows: filled at allocation, read back and checked at free, and
// the health check of every live allocation.
#include "device/allocator/device_allocator_internal.h"

#include <algorithm>
#include <cstring>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

void DeviceAllocator::FillWindows(const SlotRecord& r, CUstream stream) {
  if (config_.skip_canary_io) return;
  SlotGeometry g = Geometry(r);
  if (g.canary_before_end > g.canary_before_start)
    drv_->cuMemsetD8Async(g.canary_before_start, kCanaryFill, g.canary_before_end - g.canary_before_start, stream);
  if (g.canary_after_end > g.canary_after_start)
    drv_->cuMemsetD8Async(g.canary_after_start, kCanaryFill, g.canary_after_end - g.canary_after_start, stream);
}

// The checked canary bytes into `rb`: those before the start first, then
// those after the end (the layout CheckCanary reads).
CUresult DeviceAllocator::ReadWindows(const SlotRecord& r, uint8_t* rb, CUstream stream) {
  SlotGeometry g = Geometry(r);
  size_t lb = g.canary_before_end - g.canary_before_start;
  size_t la = g.canary_after_end - g.canary_after_start;
  if (config_.skip_canary_io) {
    memset(rb, kCanaryFill, lb + la);
    return cuda::kSuccess;
  }
  CUresult res = cuda::kSuccess;
  if (lb) res = drv_->cuMemcpyDtoHAsync(rb, g.canary_before_start, lb, stream);
  if (res == cuda::kSuccess && la) res = drv_->cuMemcpyDtoHAsync(rb + lb, g.canary_after_start, la, stream);
  return res;
}

void DeviceAllocator::CheckCanary(uint32_t index, const uint8_t* rb) {
  Slot* s = SlotOf(index);
  SlotRecord rec = s->rec;
  SlotGeometry g = Geometry(rec);
  size_t lb = g.canary_before_end - g.canary_before_start;
  size_t la = g.canary_after_end - g.canary_after_start;
  // The same check as host slots, run over the bytes read back: a geometry
  // whose canary ranges lie in the readback buffer, distances unchanged.
  uintptr_t base = reinterpret_cast<uintptr_t>(rb);
  SlotGeometry h{};
  h.canary_before_start = base;
  h.canary_before_end = h.user = h.user_end = h.canary_after_start = base + lb;
  h.canary_after_end = base + lb + la;
  CanaryDamage d = ::mate::CheckCanary(h);
  if (!d.any() || rec.canary_reported) return;
  s->rec.canary_reported = 1;
  DeviceEvent e;
  e.kind = ReportKind::kCanaryCorruption;
  e.has_record = true;
  e.record = s->rec;
  e.damage = d;
  Report(&e);
}

void DeviceAllocator::CheckHealth(const char* where) {
  if (__atomic_load_n(&broken_, __ATOMIC_ACQUIRE) || prep_stream_ == nullptr) return;
  InternalCalls internal;
  CUresult r = drv_->cuStreamQuery(prep_stream_);
  if (cuda::IsSticky(r)) NoteBroken(r, where);
}

}  // namespace device
}  // namespace mate
