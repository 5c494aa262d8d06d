#ifndef MATE_DEVICE_CUDA_DRIVER_H_
#define MATE_DEVICE_CUDA_DRIVER_H_

// The few CUDA driver types and entry points the device guard uses, declared
// here so the core builds where no CUDA toolkit exists. The driver
// (libcuda.so.1) is loaded with dlopen on first use; each function is
// resolved by its versioned name, so these declarations pin the ABI. Where
// cuda.h is found at build time, cuda_layout_check.cc static_asserts them
// against it.
#include <cstddef>
#include <cstdint>

namespace mate {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUmemGenericAllocationHandle = unsigned long long;
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorInvalidValue = 1;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNotInitialized = 3;
constexpr CUresult kErrorDeinitialized = 4;
constexpr CUresult kErrorNoDevice = 100;
constexpr CUresult kErrorNotReady = 600;
constexpr CUresult kErrorIllegalAddress = 700;
constexpr CUresult kErrorAssert = 710;  // a device-side assert
constexpr CUresult kErrorNotSupported = 801;
constexpr CUresult kErrorStreamCaptureUnsupported = 900;

// Streams named by value: the legacy default stream (also null) and the
// per-thread default stream.
constexpr uintptr_t kStreamLegacy = 0x1;
constexpr uintptr_t kStreamPerThread = 0x2;

// A stream capturing into a graph (CUstreamCaptureStatus).
constexpr int kCaptureStatusActive = 1;

constexpr int kMemAllocationTypePinned = 1;
constexpr int kMemLocationTypeDevice = 1;
constexpr int kMemAccessProtReadWrite = 3;
constexpr int kMemAllocGranularityMinimum = 0;
constexpr unsigned kEventDisableTiming = 2;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kDeviceAttributeVmmSupported = 102;
constexpr int kDeviceAttributeHandleTypePosixFdSupported = 103;
constexpr int kMemHandleTypePosixFd = 1;  // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR

struct MemLocation {
  int type;
  int id;
};

struct MemAllocationProp {
  int type;
  int requestedHandleTypes;
  MemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};

struct MemAccessDesc {
  MemLocation location;
  int flags;
};

// One pointer per entry point, filled by Load(). Names follow the driver's.
struct Driver {
#define MATE_CUDA_FN(ret, name, symbol, params) ret(*name) params = nullptr;
#include "device/driver/cuda_functions.inc"
#undef MATE_CUDA_FN
};

// Loads the driver once (thread-safe). Returns nullptr, with `why` set, when
// there is none: no NVIDIA driver, or one too old for what we need.
const Driver* Load(const char** why);
// The driver library's dlopen handle, once loaded (null before): for
// looking up entry points the table above does not hold.
void* LibraryHandle();

// The driver's name for an error, e.g. "CUDA_ERROR_ILLEGAL_ADDRESS"; its
// text, e.g. "an illegal memory access was encountered". Never null.
const char* ErrorName(CUresult r);
const char* ErrorText(CUresult r);

// Errors after which the context is unusable: every later call fails.
bool IsSticky(CUresult r);

}  // namespace cuda
}  // namespace mate

#endif  // MATE_DEVICE_CUDA_DRIVER_H_
