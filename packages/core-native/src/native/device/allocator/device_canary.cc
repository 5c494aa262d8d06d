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

// A geometry's two canary windows. A small allocation's lie a few KiB
// apart: one span from the first window's start to the second's end, the
// allocation's own bytes between, is one copy or memset instead of two
// (a driver call and a GPU operation fewer per allocation and per free).
struct Windows {
  uint64_t before, after;
  uint64_t joined;  // > 0: that span's length, at most `most` bytes
  // Where the bytes after the end lie in a readback of the windows.
  uint64_t AfterAt() const { return joined ? joined - after : before; }
};

Windows WindowsOf(const SlotGeometry& g, uint64_t most) {
  Windows w{g.canary_before_end - g.canary_before_start, g.canary_after_end - g.canary_after_start, 0};
  uint64_t span = g.canary_after_end - g.canary_before_start;
  if (w.before && w.after && span <= most) w.joined = span;
  return w;
}

// A geometry's canary spans filled, in stream order; *bytes: how many.
// `join_most` > 0: windows that close are filled in one span, over the
// allocation's bytes too (only a range not yet handed out: no work of the
// caller's can race that memset).
CUresult FillSpans(const cuda::Driver* drv, const SlotGeometry& g, uint64_t join_most, CUstream stream,
                   uint64_t* bytes) {
  Windows w = WindowsOf(g, join_most);
  CUresult res = cuda::kSuccess;
  if (w.joined) {
    res = drv->cuMemsetD8Async(g.canary_before_start, kCanaryFill, w.joined, stream);
    *bytes = res == cuda::kSuccess ? w.joined : 0;
    return res;
  }
  if (w.before) res = drv->cuMemsetD8Async(g.canary_before_start, kCanaryFill, w.before, stream);
  if (res == cuda::kSuccess && w.after) res = drv->cuMemsetD8Async(g.canary_after_start, kCanaryFill, w.after, stream);
  *bytes = res == cuda::kSuccess ? w.before + w.after : 0;
  return res;
}

}  // namespace

CUresult DeviceAllocator::FillWindows(const SlotRecord& r, CUstream stream) {
  if (config_.skip_canary_io) return cuda::kSuccess;
  uint64_t bytes;
  // The caller's stream: its work on another stream could race a memset
  // over the allocation's bytes, so the windows alone.
  return FillSpans(drv_, Geometry(r), 0, stream, &bytes);
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
  CUresult res = FillSpans(drv_, g, kJoinedWindowsMax, stream, &bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.filled_ahead_bytes += bytes;
  return res;
}

// The checked canary bytes into `rb`: those before the start first, then
// those after the end, right after them or, read in one span with the
// allocation's bytes, at their distance (Windows::AfterAt, as CheckCanary reads).
CUresult DeviceAllocator::ReadWindows(const SlotRecord& r, uint8_t* rb, CUstream stream) {
  SlotGeometry g = Geometry(r);
  Windows w = WindowsOf(g, kJoinedWindowsMax);
  if (config_.skip_canary_io) {
    memset(rb, kCanaryFill, w.AfterAt() + w.after);
    return cuda::kSuccess;
  }
  if (w.joined) return drv_->cuMemcpyDtoHAsync(rb, g.canary_before_start, w.joined, stream);
  CUresult res = cuda::kSuccess;
  if (w.before) res = drv_->cuMemcpyDtoHAsync(rb, g.canary_before_start, w.before, stream);
  if (res == cuda::kSuccess && w.after)
    res = drv_->cuMemcpyDtoHAsync(rb + w.before, g.canary_after_start, w.after, stream);
  return res;
}

void DeviceAllocator::CheckCanary(uint32_t index, const uint8_t* rb) {
  Slot* s = SlotOf(index);
  SlotRecord rec = s->rec;
  Windows w = WindowsOf(Geometry(rec), kJoinedWindowsMax);
  // The same check as host slots, run over the bytes read back: a geometry
  // whose canary ranges lie in the readback buffer, distances unchanged.
  uintptr_t base = reinterpret_cast<uintptr_t>(rb);
  SlotGeometry h{};
  h.canary_before_start = base;
  h.canary_before_end = h.user = base + w.before;
  h.user_end = h.canary_after_start = base + w.AfterAt();
  h.canary_after_end = base + w.AfterAt() + w.after;
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
