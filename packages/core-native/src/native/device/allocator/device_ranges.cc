// Address ranges (reserved blocks, one range per allocation: data granules
// and the unmapped guard) and the physical chunks mapped into them.
#include "device/allocator/device_allocator_internal.h"
#include "device/allocator/guarded_span.h"

#include <algorithm>

#include "core/alloc_log.h"
#include "core/process_state.h"

namespace mate {
namespace device {

uint32_t DeviceAllocator::DataGranulesFor(size_t size) const {
  if (size == 0) return 0;
  uint64_t used = config_.tail_mode ? RoundUp(size, config_.alignment) : size;
  return static_cast<uint32_t>((used + granule_ - 1) / granule_);
}

DeviceAllocator::Slot* DeviceAllocator::SlotOf(uint32_t index) const { return &slots_[index]; }

bool DeviceAllocator::InBlocks(CUdeviceptr ptr) const {
  uint32_t n = __atomic_load_n(&block_count_, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const Block* b = blocks_[i];
    if (ptr >= b->base && ptr < b->base + b->granules * granule_) return true;
  }
  return false;
}

uint32_t DeviceAllocator::AcquireRange(uint32_t data_granules) {
  uint32_t total = data_granules + 1;
  auto it = free_ranges_.find(total);
  if (it != free_ranges_.end() && !it->second.empty()) {
    uint32_t idx = it->second.back();
    it->second.pop_back();
    return idx;
  }
  Block* b = block_count_ ? blocks_[block_count_ - 1] : nullptr;
  if (b == nullptr || b->next + total > b->granules) {
    if (block_count_ == kMaxBlocks) return 0;
    // Address space only: no memory. Rare (a block is 1 TiB), so under the lock.
    uint64_t bytes = std::max<uint64_t>(RoundUp(config_.reserve_bytes, granule_), (total + 1) * granule_);
    CUdeviceptr base = 0;
    while (drv_->cuMemAddressReserve(&base, bytes, granule_, 0, 0) != cuda::kSuccess) {
      if (bytes / 2 < (total + 1) * granule_ || bytes / 2 < (64ull << 20)) return 0;
      bytes = RoundUp(bytes / 2, granule_);
    }
    auto* nb =
        new Block{base, bytes / granule_, 0, static_cast<uint32_t*>(MapTable((bytes / granule_) * sizeof(uint32_t)))};
    if (nb->map == nullptr) return 0;
    blocks_[block_count_] = nb;
    __atomic_store_n(&block_count_, block_count_ + 1, __ATOMIC_RELEASE);
    WidenGuardedSpan(base, base + bytes);
    b = nb;
  }
  if (slot_count_ + 1 >= max_slots_) return 0;
  uint32_t idx = ++slot_count_;
  Slot* s = SlotOf(idx);
  s->rec.slot_start = b->base + b->next * granule_;
  s->rec.data_pages = total - 1;
  // The mode fixes where data and guard lie in the range: set before mapping.
  s->rec.mode = config_.tail_mode ? Mode::kTail : Mode::kHead;
  s->total_granules = total;
  for (uint64_t g = 0; g < total; g++) __atomic_store_n(&b->map[b->next + g], idx, __ATOMIC_RELEASE);
  b->next += total;
  return idx;
}

void DeviceAllocator::ReleaseRange(uint32_t index) {
  Slot* s = SlotOf(index);
  s->phase = kRangeFree;
  if (LoadState(s->rec) == SlotState::kQuarantined) StoreState(&s->rec, SlotState::kReusable);
  free_ranges_[s->total_granules].push_back(index);
}

bool DeviceAllocator::TakeIdleChunk(uint32_t granules, CUmemGenericAllocationHandle* out) {
  auto it = idle_chunks_.find(granules);
  if (it == idle_chunks_.end() || it->second.empty()) return false;
  *out = it->second.back();
  it->second.pop_back();
  idle_bytes_ -= granules * granule_;
  return true;
}

CUresult DeviceAllocator::CreateChunk(uint32_t granules, CUmemGenericAllocationHandle* out) {
  // Out of memory: the caller gives back what the guard keeps and retries
  // (device_memory_pressure.cc).
  CUresult r = drv_->cuMemCreate(out, granules * granule_, &prop_, 0);
  if (r == cuda::kSuccess) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.chunks_created++;
    stats_.physical_bytes += granules * granule_;
  }
  return r;
}

void DeviceAllocator::RetireChunk(uint32_t granules, CUmemGenericAllocationHandle chunk) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_bytes_ + granules * granule_ <= config_.idle_chunk_bytes) {
      idle_chunks_[granules].push_back(chunk);
      idle_bytes_ += granules * granule_;
      return;
    }
  }
  ReleaseChunk(granules, chunk);  // the pool is full
}

void DeviceAllocator::ReleaseChunk(uint32_t granules, CUmemGenericAllocationHandle chunk) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.physical_bytes -= granules * granule_;
  }
  drv_->cuMemRelease(chunk);
}

CUresult DeviceAllocator::MapSlot(uint32_t index, uint32_t data_granules, CUmemGenericAllocationHandle chunk) {
  Slot* s = SlotOf(index);
  SlotGeometry g = GeometryOf(s->rec, granule_);
  size_t bytes = data_granules * granule_;
  CUresult r = drv_->cuMemMap(g.data_start, bytes, 0, chunk, 0);
  if (r != cuda::kSuccess) return r;
  r = drv_->cuMemSetAccess(g.data_start, bytes, access_, __atomic_load_n(&access_count_, __ATOMIC_ACQUIRE));
  if (r != cuda::kSuccess) {
    drv_->cuMemUnmap(g.data_start, bytes);
    return r;
  }
  s->chunk = chunk;
  s->mapped = 1;
  return cuda::kSuccess;
}

bool DeviceAllocator::UnmapUnused(uint32_t index, CUmemGenericAllocationHandle chunk) {
  Slot* s = SlotOf(index);
  uint32_t n = s->total_granules - 1;
  if (drv_->cuMemUnmap(GeometryOf(s->rec, granule_).data_start, n * granule_) != cuda::kSuccess) return false;
  RetireChunk(n, chunk);
  std::lock_guard<std::mutex> lock(mu_);
  s->mapped = 0;
  ReleaseRange(index);
  return true;
}

void DeviceAllocator::PlaceUser(SlotRecord* r, size_t size) const {
  r->size = size;
  r->mode = config_.tail_mode ? Mode::kTail : Mode::kHead;
  r->alignment = static_cast<uint16_t>(config_.alignment);
  SlotGeometry g = GeometryOf(*r, granule_);
  r->user = size == 0 ? g.guard_start
                      : (config_.tail_mode ? (g.guard_start - size) & ~(static_cast<uintptr_t>(config_.alignment) - 1)
                                           : g.data_start);
}

SlotGeometry DeviceAllocator::Geometry(const SlotRecord& r) const {
  SlotGeometry g = GeometryOf(r, granule_);
  uint64_t w = std::min<uint64_t>(config_.canary_window, kReadbackBytes / 2);
  if (g.canary_before_end - g.canary_before_start > w) g.canary_before_start = g.canary_before_end - w;
  if (g.canary_after_end - g.canary_after_start > w) g.canary_after_end = g.canary_after_start + w;
  return g;
}

}  // namespace device
}  // namespace mate
