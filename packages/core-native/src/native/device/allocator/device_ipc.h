#ifndef MATE_DEVICE_DEVICE_IPC_H_
#define MATE_DEVICE_DEVICE_IPC_H_

// The receiving side of a guarded allocation shared between processes
// (CUDA IPC as torch.multiprocessing does it; the sending side is
// DeviceAllocator::Export). Guarded ranges are virtual-memory mappings,
// which legacy IPC handles (cudaIpcGetMemHandle) cannot name: the chunk
// travels as a file descriptor instead and is mapped here with its guard
// granule on the same side as in the sender.
#include <cstdint>
#include <string>

#include "device/driver/cuda_driver.h"

namespace mate {
namespace device {

// Also the C ABI's layout (mate_guard_ipc_map/unmap, the Python hook's
// ctypes structure): four 64-bit words.
struct SharedMapping {
  cuda::CUdeviceptr reserved = 0;  // the whole reservation: data and guard
  uint64_t reserved_bytes = 0;
  cuda::CUdeviceptr data = 0;  // where the chunk is mapped
  uint64_t chunk_bytes = 0;
};
static_assert(sizeof(SharedMapping) == 32, "the Python hook's layout");

// Maps the chunk behind `fd` (not closed) for device `ordinal`. The
// imported handle is released at once: the mapping keeps the memory alive,
// whatever the sending process does with its allocation meanwhile.
bool MapShared(const cuda::Driver* drv, int ordinal, int fd, uint64_t chunk_bytes, uint64_t granule, bool guard_before,
               SharedMapping* out, std::string* why);
void UnmapShared(const cuda::Driver* drv, const SharedMapping& m);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_IPC_H_
