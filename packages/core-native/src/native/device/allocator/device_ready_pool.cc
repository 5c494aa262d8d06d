// Ranges mapped and canary-filled ahead of requests, per size class: on the
// allocating thread when the pool is empty, else by the background thread.
#include "device/allocator/device_allocator_internal.h"

#include <algorithm>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

uint32_t DeviceAllocator::PrepareInline(uint32_t n, size_t size, CUstream stream, const char** reason,
                                        CUresult* result) {
  InternalCalls internal;
  uint32_t idx;
  CUmemGenericAllocationHandle chunk = 0;
  bool have;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idx = AcquireRange(n);
    if (idx == 0) {
      *reason = "the guarded GPU address space is full";
      return 0;
    }
    SlotOf(idx)->phase = kPreparing;
    have = TakeIdleChunk(n, &chunk);
  }
  EnsureContext(drv_, ctx_);
  CUresult r = have ? cuda::kSuccess : CreateChunk(n, &chunk);
  if (r == cuda::kSuccess) {
    r = MapSlot(idx, n, chunk);
    if (r != cuda::kSuccess) RetireChunk(n, chunk);
  }
  *result = r;
  if (r != cuda::kSuccess) {
    if (cuda::IsSticky(r)) NoteBroken(r, "mapping a guarded allocation");
    *reason = r == cuda::kErrorOutOfMemory
                  ? "the GPU ran short of memory for guarded allocations (each holds at least one 2 MiB granule)"
                  : "mapping a guarded range failed (cuMemMap/cuMemSetAccess)";
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseRange(idx);
    return 0;
  }
  Slot* s = SlotOf(idx);
  PlaceUser(&s->rec, size);
  // Only the checked canary bytes are filled, in stream order before any
  // work the caller queues after this allocation.
  FillWindows(s->rec, stream);
  s->filled = size + 1;
  return idx;
}

bool DeviceAllocator::PrepareAhead() {
  struct Job {
    uint32_t n, idx;
    uint64_t size;  // filled for this size; 0: for its whole class
    CUmemGenericAllocationHandle chunk;
    bool have, ok;
  };
  std::vector<Job> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A full batch is ~8 x 40 us of serialized driver calls: only when no
    // free waits for the background thread.
    const size_t batch = pending_.empty() ? kPrepareBatch : kPrepareBatchWhileFreeing;
    for (auto& [n, c] : classes_) {
      while (jobs.size() < batch && c.ready.size() + c.preparing < c.target &&
             ready_bytes_ + n * granule_ <= config_.prepare_budget_bytes) {
        uint32_t idx = AcquireRange(n);
        if (idx == 0) break;
        SlotOf(idx)->phase = kPreparing;
        Job j{n, idx, 0, 0, false, false};
        if (!c.wanted.empty()) {
          j.size = c.wanted.front();
          c.wanted.pop_front();
        }
        j.have = TakeIdleChunk(n, &j.chunk);
        c.preparing++;
        ready_bytes_ += n * granule_;
        jobs.push_back(j);
      }
    }
  }
  if (jobs.empty()) return false;
  for (Job& j : jobs) {
    CUresult r = j.have ? cuda::kSuccess : CreateChunk(j.n, &j.chunk);
    if (r != cuda::kSuccess) continue;
    r = MapSlot(j.idx, j.n, j.chunk);
    if (r != cuda::kSuccess) {
      RetireChunk(j.n, j.chunk);
      if (cuda::IsSticky(r)) NoteBroken(r, "mapping ahead");
      continue;
    }
    j.ok = FillAhead(j.idx, j.n, j.size, prep_stream_) == cuda::kSuccess;
  }
  CUresult r = drv_->cuStreamSynchronize(prep_stream_);
  if (cuda::IsSticky(r)) NoteBroken(r, "mapping ahead");
  std::vector<std::pair<uint32_t, CUmemGenericAllocationHandle>> unmapped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Job& j : jobs) {
      ClassState& c = classes_[j.n];
      c.preparing--;
      if (j.ok && r == cuda::kSuccess) {
        SlotOf(j.idx)->phase = kReady;
        c.ready.push_back({j.idx, SlotOf(j.idx)->filled});
      } else {
        ready_bytes_ -= j.n * granule_;
        c.target = static_cast<uint32_t>(c.ready.size());  // short of memory: stop asking
        if (SlotOf(j.idx)->mapped) unmapped.emplace_back(j.idx, j.chunk);
        else ReleaseRange(j.idx);
      }
    }
  }
  for (auto& [idx, chunk] : unmapped) UnmapUnused(idx, chunk);
  return true;
}

}  // namespace device
}  // namespace mate
