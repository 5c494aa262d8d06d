// A guarded allocation shared with another process: the sending side
// (DeviceAllocator::Export) and the receiving side (MapShared).
#include "device/allocator/device_ipc.h"

#include <unistd.h>

#include "device/allocator/device_allocator_internal.h"

namespace mate {
namespace device {

bool DeviceAllocator::Export(CUdeviceptr ptr, ExportedRange* out, std::string* why) {
  if (!exportable_) {
    *why =
        "device " + std::to_string(ordinal_) +
        " cannot share memory as a file descriptor (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)";
    return false;
  }
  uint32_t idx = Lookup(ptr);
  CUmemGenericAllocationHandle chunk = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* s = idx ? SlotOf(idx) : nullptr;
    if (s == nullptr || s->phase != kLive || !s->mapped || ptr < s->rec.user || ptr > s->rec.user + s->rec.size) {
      *why = "the pointer is not a live guarded allocation";
      return false;
    }
    SlotGeometry g = GeometryOf(s->rec, granule_);
    chunk = s->chunk;
    out->chunk_bytes = static_cast<uint64_t>(s->total_granules - 1) * granule_;
    out->offset = s->rec.user - g.data_start;
    out->size = s->rec.size;
    out->granule = granule_;
    out->guard_before = g.guard_start < g.data_start ? 1 : 0;
  }
  // The caller holds the allocation (a tensor being sent): its chunk stays.
  InternalCalls internal;
  int fd = -1;
  CUresult r = drv_->cuMemExportToShareableHandle(&fd, chunk, cuda::kMemHandleTypePosixFd, 0);
  if (r != cuda::kSuccess) {
    *why = std::string("cuMemExportToShareableHandle: ") + cuda::ErrorName(r);
    return false;
  }
  out->fd = fd;
  std::lock_guard<std::mutex> lock(mu_);
  if (!SlotOf(idx)->exported) stats_.exported++;
  __atomic_store_n(&SlotOf(idx)->exported, 1, __ATOMIC_RELEASE);
  return true;
}

bool MapShared(const cuda::Driver* drv, int ordinal, int fd, uint64_t chunk_bytes, uint64_t granule, bool guard_before,
               SharedMapping* out, std::string* why) {
  auto fail = [&](const char* what, CUresult r) {
    *why = std::string(what) + ": " + cuda::ErrorName(r) + " (" + cuda::ErrorText(r) + ")";
    return false;
  };
  if (drv->cuMemImportFromShareableHandle == nullptr || drv->cuMemAddressFree == nullptr) {
    *why = "the CUDA driver has no cuMemImportFromShareableHandle";
    return false;
  }
  if (granule == 0 || chunk_bytes == 0 || chunk_bytes % granule != 0) {
    *why = "a shared range of " + std::to_string(chunk_bytes) + " bytes is not whole granules of " +
           std::to_string(granule);
    return false;
  }
  cuda::CUdevice dev = 0;
  cuda::CUcontext ctx = nullptr;
  CUresult r = drv->cuDeviceGet(&dev, ordinal);
  if (r != cuda::kSuccess) return fail("cuDeviceGet", r);
  if ((r = drv->cuDevicePrimaryCtxRetain(&ctx, dev)) != cuda::kSuccess) return fail("cuDevicePrimaryCtxRetain", r);
  InContext in_ctx(drv, ctx);
  CUmemGenericAllocationHandle handle = 0;
  r = drv->cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                          cuda::kMemHandleTypePosixFd);
  if (r != cuda::kSuccess) return fail("cuMemImportFromShareableHandle", r);
  SharedMapping m;
  m.reserved_bytes = chunk_bytes + granule;
  m.chunk_bytes = chunk_bytes;
  if ((r = drv->cuMemAddressReserve(&m.reserved, m.reserved_bytes, granule, 0, 0)) != cuda::kSuccess) {
    drv->cuMemRelease(handle);
    return fail("cuMemAddressReserve", r);
  }
  m.data = guard_before ? m.reserved + granule : m.reserved;
  r = drv->cuMemMap(m.data, chunk_bytes, 0, handle, 0);
  drv->cuMemRelease(handle);  // the mapping holds the memory from here on
  if (r != cuda::kSuccess) {
    drv->cuMemAddressFree(m.reserved, m.reserved_bytes);
    return fail("cuMemMap", r);
  }
  cuda::MemAccessDesc access{};
  access.location.type = cuda::kMemLocationTypeDevice;
  access.location.id = dev;
  access.flags = cuda::kMemAccessProtReadWrite;
  if ((r = drv->cuMemSetAccess(m.data, chunk_bytes, &access, 1)) != cuda::kSuccess) {
    UnmapShared(drv, m);
    return fail("cuMemSetAccess", r);
  }
  *out = m;
  return true;
}

void UnmapShared(const cuda::Driver* drv, const SharedMapping& m) {
  if (m.reserved == 0) return;
  drv->cuMemUnmap(m.data, m.chunk_bytes);
  drv->cuMemAddressFree(m.reserved, m.reserved_bytes);
}

}  // namespace device
}  // namespace mate
