// Peer access to guarded ranges. Memory from cuMemCreate is accessible
// only from the devices cuMemSetAccess names; plain cudaMalloc memory is
// reachable from a peer once the program turns peer access on. So that a
// guarded program behaves as a plain one (PyTorch's x.to("cuda:1"), a
// kernel on one GPU reading another's tensor), once a process uses a
// second device every allocator grants each other device that can be its
// peer access to all its ranges: those mapped now, and every range mapped
// later. A one-device process (a DDP rank) pays nothing.
#include "device/allocator/device_allocator_internal.h"

#include <vector>

namespace mate {
namespace device {

void DeviceAllocator::GrantPeer(int peer_ordinal) {
  InternalCalls internal;
  cuda::CUdevice peer = 0;
  int can = 0;
  if (peer_ordinal == ordinal_ || drv_->cuDeviceCanAccessPeer == nullptr ||
      drv_->cuDeviceGet(&peer, peer_ordinal) != cuda::kSuccess ||
      drv_->cuDeviceCanAccessPeer(&can, peer, dev_) != cuda::kSuccess || !can)
    return;
  std::vector<uint32_t> mapped;
  cuda::MemAccessDesc desc{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t n = access_count_;
    for (uint32_t i = 0; i < n; i++)
      if (access_[i].location.id == peer) return;  // granted already
    if (n == kMaxAccess) return;
    desc.location.type = cuda::kMemLocationTypeDevice;
    desc.location.id = peer;
    desc.flags = cuda::kMemAccessProtReadWrite;
    access_[n] = desc;
    // Ranges mapped from now on include the peer; those mapped before are granted below.
    __atomic_store_n(&access_count_, n + 1, __ATOMIC_RELEASE);
    for (uint32_t i = 1; i <= slot_count_; i++)
      if (SlotOf(i)->mapped) mapped.push_back(i);
  }
  InContext in_ctx(drv_, ctx_);
  for (uint32_t idx : mapped) {
    Slot* s = SlotOf(idx);
    // A range unmapped meanwhile fails here and is mapped again with the peer.
    drv_->cuMemSetAccess(GeometryOf(s->rec, granule_).data_start, static_cast<size_t>(s->total_granules - 1) * granule_,
                         &desc, 1);
  }
}

}  // namespace device
}  // namespace mate
