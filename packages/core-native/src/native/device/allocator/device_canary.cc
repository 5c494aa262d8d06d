// Canary windows: filled at allocation, read back and checked at free, and
// the health check of every live allocation.
#include "device/allocator/device_allocator_internal.h"

#include <algorithm>
#include <cstring>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

namespace {

// A geometry's canary spans filled, in stream order; *bytes: how many.
CUresult FillSpans(const cuda::Driver* drv, const SlotGeometry& g, CUstream stream, uint64_t* bytes) {
  uint64_t before = g.canary_before_end - g.canary_before_start, after = g.canary_after_end - g.canary_after_start;
  CUresult res = cuda::kSuccess;
  if (before) res = drv->cuMemsetD8Async(g.canary_before_start, kCanaryFill, before, stream);
  if (res == cuda::kSuccess && after) res = drv->cuMemsetD8Async(g.canary_after_start, kCanaryFill, after, stream);
  *bytes = res == cuda::kSuccess ? before + after : 0;
  return res;
}

}  // namespace

CUresult DeviceAllocator::FillWindows(const SlotRecord& r, CUstream stream) {
  if (config_.skip_canary_io) return cuda::kSuccess;
  uint64_t bytes;
  return FillSpans(drv_, Geometry(r), stream, &bytes);
}

// A range mapped ahead: filled for the size it replaces (its two windows,
// a few KiB), or, with none to replace, for every size of its class (n
// data granules). Filling every range whole wrote ~2 MiB a range, ~100 MiB
// a step through the GPU's L2 in the reference loop (bench/README). A
// range filled for one size serves another with a window fill on the
// caller's stream (BeginLife).
CUresult DeviceAllocator::FillAhead(uint32_t index, uint32_t n, uint64_t size, CUstream stream) {
  Slot* s = SlotOf(index);
  s->filled = size ? size + 1 : kFilledForClass;
  if (config_.skip_canary_io || n == 0) return cuda::kSuccess;
  // Placed on a copy: the record keeps its last allocation's history (a
  // stale pointer's report) until BeginLife places the next one.
  SlotRecord r = s->rec;
  SlotGeometry g;
  if (size) {
    PlaceUser(&r, size);
    g = Geometry(r);
  } else {
    // Every size's windows lie in the unclipped slack of the class's
    // smallest size: a larger size's bytes cover the smallest's (the guard
    // side fixed, the other end moving away from it). In tail mode, the
    // first granule and the alignment gap.
    PlaceUser(&r, static_cast<size_t>(n - 1) * granule_ + 1);
    g = GeometryOf(r, granule_);
  }
  uint64_t bytes;
  CUresult res = FillSpans(drv_, g, stream, &bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.filled_ahead_bytes += bytes;
  return res;
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
