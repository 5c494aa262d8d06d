// When the GPU runs out of memory for a guarded allocation: the allocator
// gives back what it holds for later (ranges mapped ahead, pooled chunks,
// freed ranges whose unmapping waits), retries once, and otherwise fails
// the allocation at once with its accounting: the caller gets the
// out-of-memory code it expects (PyTorch raises OutOfMemoryError), never a
// retry loop. The first failure on each device is filed as an out-of-memory
// report; later ones are counted.
#include "device/allocator/device_allocator_internal.h"

#include <inttypes.h>
#include <stdio.h>

#include <vector>

#include "core/process_state.h"

namespace mate {
namespace device {

namespace {

// Frees whose GPU work is still running hold memory until it ends: wait for
// them at most this long (a kernel that never ends must not hang the caller).
constexpr auto kPendingWait = std::chrono::milliseconds(1000);

// "4.00 GiB", "12.0 MiB", "512 B".
std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30)) snprintf(buf, sizeof(buf), "%.2f GiB", n / 1073741824.0);
  else if (n >= (1ull << 20)) snprintf(buf, sizeof(buf), "%.1f MiB", n / 1048576.0);
  else if (n >= 1024) snprintf(buf, sizeof(buf), "%.1f KiB", n / 1024.0);
  else snprintf(buf, sizeof(buf), "%" PRIu64 " B", n);
  return buf;
}

}  // namespace

uint64_t DeviceAllocator::GiveBack() {
  InternalCalls internal;
  InContext in_ctx(drv_, ctx_);
  std::vector<uint32_t> ready;
  uint64_t physical_before;
  {
    std::unique_lock<std::mutex> lock(mu_);
    physical_before = stats_.physical_bytes;
    // Frees not unmapped yet: the background thread finishes them as
    // their last use completes.
    if (pending_bytes_ > 0) {
      woken_ = true;
      wake_.notify_one();
      readback_free_.wait_for(lock, kPendingWait, [&] { return pending_bytes_ == 0 || broken_; });
    }
    for (auto& [n, c] : classes_) {
      c.target = 0;  // mapping ahead starts again only as sizes miss again
      for (const ClassState::Ready& r : c.ready) ready.push_back(r.idx);
      ready_bytes_ -= static_cast<uint64_t>(c.ready.size()) * n * granule_;
      c.ready.clear();
    }
  }
  // Their chunks go to the idle pool (or straight back to the driver),
  // which is then emptied.
  for (uint32_t idx : ready) {
    if (UnmapUnused(idx, SlotOf(idx)->chunk)) continue;
    std::lock_guard<std::mutex> lock(mu_);
    SlotOf(idx)->phase = kQuarantined;  // left mapped and never reused
  }
  std::vector<std::pair<uint32_t, CUmemGenericAllocationHandle>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [g, v] : idle_chunks_)
      for (auto h : v) idle.emplace_back(g, h);
    idle_chunks_.clear();
    idle_bytes_ = 0;
  }
  uint64_t released = 0;
  for (auto& [g, h] : idle)
    if (drv_->cuMemRelease(h) == cuda::kSuccess) released += static_cast<uint64_t>(g) * granule_;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.physical_bytes -= released;
  // What the device holds less than before (other threads may have mapped meanwhile).
  return physical_before > stats_.physical_bytes ? physical_before - stats_.physical_bytes : 0;
}

CUresult DeviceAllocator::OutOfMemory(size_t size, uint64_t given_back) {
  DeviceEvent e;
  e.kind = ReportKind::kOutOfMemory;
  e.has_memory = true;
  DeviceMemoryAccount& m = e.memory;
  m.requested = size;
  m.given_back = given_back;
  {
    InternalCalls internal;
    InContext in_ctx(drv_, ctx_);
    size_t free_b = 0, total_b = 0;
    if (drv_->cuMemGetInfo(&free_b, &total_b) == cuda::kSuccess) {
      m.device_free = free_b;
      m.device_total = total_b;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    m.failures = ++stats_.out_of_memory;
    m.live_count = stats_.live;
    m.live_bytes = stats_.live_bytes;
    m.live_mapped = stats_.live_granules * granule_;
    m.quarantined_count = stats_.quarantined;
    m.quarantined_bytes = stats_.quarantined_bytes;
    m.pending_bytes = pending_bytes_;
    m.pooled_bytes = idle_bytes_;
    m.ready_bytes = ready_bytes_;
    e.allocations = stats_.allocations;
    e.peak_live = stats_.peak_live;
    e.fallbacks = stats_.fallbacks;
  }
  // The caller's error text: what PyTorch's OutOfMemoryError (or a C
  // caller's error string) says, with the numbers.
  std::string text = "CUDA out of memory under mate-guard. Tried to allocate " + Bytes(size) + " on device " +
                     std::to_string(ordinal_) + " (total " + Bytes(m.device_total) + ", " + Bytes(m.device_free) +
                     " free). Guarded: " + std::to_string(m.live_count) + " live allocations of " +
                     Bytes(m.live_bytes) + " hold " + Bytes(m.live_mapped) + " (guard overhead " +
                     Bytes(m.live_mapped > m.live_bytes ? m.live_mapped - m.live_bytes : 0) +
                     ": whole 2 MiB granules); " + Bytes(m.pending_bytes) +
                     " in freed allocations still in use by the GPU; " + Bytes(given_back) +
                     " given back before the one retry. Try a smaller batch or fewer live tensors.";
  hooks_.SetLastError(text.c_str());
  if (m.failures == 1) {
    e.device = ordinal_;
    e.granule = granule_;
    e.test_id = CurrentTestId();
    if (sink_ != nullptr) sink_->OnEvent(e);
  }
  return cuda::kErrorOutOfMemory;
}

}  // namespace device
}  // namespace mate
