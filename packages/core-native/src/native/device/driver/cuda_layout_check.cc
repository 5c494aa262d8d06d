// Built only where cuda.h is found: pins the declarations of cuda_driver.h
// to the real ones. Nothing here runs.
#include <cuda.h>

#include <cstddef>

#include "device/driver/cuda_driver.h"

namespace mate {
namespace cuda {

#define SAME_LAYOUT(ours, theirs, field) \
  static_assert(offsetof(ours, field) == offsetof(theirs, field), #ours "." #field " is misplaced")

static_assert(sizeof(MemLocation) == sizeof(CUmemLocation), "MemLocation size");
SAME_LAYOUT(MemLocation, CUmemLocation, type);
SAME_LAYOUT(MemLocation, CUmemLocation, id);
static_assert(sizeof(MemAllocationProp) == sizeof(CUmemAllocationProp), "MemAllocationProp size");
SAME_LAYOUT(MemAllocationProp, CUmemAllocationProp, type);
SAME_LAYOUT(MemAllocationProp, CUmemAllocationProp, requestedHandleTypes);
SAME_LAYOUT(MemAllocationProp, CUmemAllocationProp, location);
SAME_LAYOUT(MemAllocationProp, CUmemAllocationProp, win32HandleMetaData);
SAME_LAYOUT(MemAllocationProp, CUmemAllocationProp, allocFlags);
static_assert(sizeof(MemAccessDesc) == sizeof(CUmemAccessDesc), "MemAccessDesc size");
SAME_LAYOUT(MemAccessDesc, CUmemAccessDesc, location);
SAME_LAYOUT(MemAccessDesc, CUmemAccessDesc, flags);
static_assert(sizeof(CUdeviceptr) == sizeof(::CUdeviceptr), "CUdeviceptr");
static_assert(sizeof(CUmemGenericAllocationHandle) == sizeof(::CUmemGenericAllocationHandle), "handle");

static_assert(kErrorInvalidValue == CUDA_ERROR_INVALID_VALUE, "");
static_assert(kErrorOutOfMemory == CUDA_ERROR_OUT_OF_MEMORY, "");
static_assert(kErrorNotInitialized == CUDA_ERROR_NOT_INITIALIZED, "");
static_assert(kErrorNoDevice == CUDA_ERROR_NO_DEVICE, "");
static_assert(kErrorNotReady == CUDA_ERROR_NOT_READY, "");
static_assert(kErrorIllegalAddress == CUDA_ERROR_ILLEGAL_ADDRESS, "");
static_assert(kErrorNotSupported == CUDA_ERROR_NOT_SUPPORTED, "");
static_assert(kCaptureStatusActive == CU_STREAM_CAPTURE_STATUS_ACTIVE, "");
static_assert(kMemAllocationTypePinned == CU_MEM_ALLOCATION_TYPE_PINNED, "");
static_assert(kMemLocationTypeDevice == CU_MEM_LOCATION_TYPE_DEVICE, "");
static_assert(kMemAccessProtReadWrite == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "");
static_assert(kMemAllocGranularityMinimum == CU_MEM_ALLOC_GRANULARITY_MINIMUM, "");
static_assert(kEventDisableTiming == CU_EVENT_DISABLE_TIMING, "");
static_assert(kStreamNonBlocking == CU_STREAM_NON_BLOCKING, "");
static_assert(kDeviceAttributeVmmSupported == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "");
static_assert(kDeviceAttributeHandleTypePosixFdSupported ==
                  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
              "");
static_assert(kMemHandleTypePosixFd == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, "");

}  // namespace cuda
}  // namespace mate
