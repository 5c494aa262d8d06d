#ifndef MATE_DEVICE_CUPTI_H_
#define MATE_DEVICE_CUPTI_H_

// The part of NVIDIA's CUPTI callback API launch tracking uses, declared
// here (like cuda_driver.h) so the core builds without the toolkit; the
// library (libcupti.so) is loaded with dlopen when tracking starts. Where
// cupti.h is found at build time, cupti_layout_check.cc pins these to it.
#include <cstddef>
#include <cstdint>

#include "device/driver/cuda_driver.h"

namespace mate {
namespace cupti {

using CUptiResult = int;
using CallbackId = uint32_t;
struct Subscriber_st;
using SubscriberHandle = Subscriber_st*;

constexpr CUptiResult kSuccess = 0;

enum Domain : int { kDomainDriver = 1 };
enum Site : int { kEnter = 0, kExit = 1 };

// CUpti_CallbackData.
struct CallbackData {
  Site callbackSite;
  const char* functionName;
  const void* functionParams;
  void* functionReturnValue;
  const char* symbolName;
  cuda::CUcontext context;
  uint32_t contextUid;
  uint64_t* correlationData;
  uint32_t correlationId;
};

using CallbackFunc = void (*)(void* userdata, Domain domain, CallbackId cbid, const void* cbdata);

// Callback ids (cupti_driver_cbid.h): stable numbers.
namespace driver {
constexpr CallbackId kCtxSynchronize = 17, kEventRecord = 119, kEventQuery = 120, kEventSynchronize = 121,
                     kEventDestroy = 122, kStreamCreate = 124, kStreamQuery = 125, kStreamSynchronize = 126,
                     kStreamWaitEvent = 295, kLaunchKernel = 307, kEventDestroyV2 = 325,
                     kStreamCreateWithPriority = 367, kStreamWaitEventPtsz = 436, kStreamQueryPtsz = 439,
                     kStreamSynchronizePtsz = 440, kEventRecordPtsz = 441, kLaunchKernelPtsz = 442,
                     kLaunchCooperativeKernel = 477, kLaunchCooperativeKernelPtsz = 478, kEventRecordWithFlags = 587,
                     kEventRecordWithFlagsPtsz = 588, kLaunchKernelEx = 652, kLaunchKernelExPtsz = 653,
                     kCtxSynchronizeV2 = 800;
}  // namespace driver

// Parameter structs of the calls above (generated_cuda_meta.h), only those read.
struct LaunchConfig {  // CUlaunchConfig
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  cuda::CUstream hStream;
  void* attrs;
  unsigned numAttrs;
};
struct cuLaunchKernel_params {  // also cuLaunchCooperativeKernel (no `extra`)
  cuda::CUfunction f;
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  cuda::CUstream hStream;
  void** kernelParams;
  void** extra;
};
struct cuLaunchKernelEx_params {
  const LaunchConfig* config;
  cuda::CUfunction f;
  void** kernelParams;
  void** extra;
};
struct EventStream_params {  // cuEventRecord(WithFlags)
  cuda::CUevent event;
  cuda::CUstream stream;
};
struct StreamEvent_params {  // cuStreamWaitEvent
  cuda::CUstream stream;
  cuda::CUevent event;
};
struct Stream_params {  // stream synchronize / query
  cuda::CUstream stream;
};
struct Event_params {  // event synchronize / query / destroy
  cuda::CUevent event;
};
struct StreamCreate_params {  // cuStreamCreate(WithPriority)
  cuda::CUstream* stream;
  unsigned flags;
};

struct Api {
  CUptiResult (*cuptiSubscribe)(SubscriberHandle* subscriber, CallbackFunc callback, void* userdata);
  CUptiResult (*cuptiUnsubscribe)(SubscriberHandle subscriber);
  CUptiResult (*cuptiEnableCallback)(uint32_t enable, SubscriberHandle subscriber, Domain domain, CallbackId cbid);
  CUptiResult (*cuptiGetResultString)(CUptiResult result, const char** str);
};

// Loads libcupti once: already loaded (by soname), then the usual places
// (CUDA_HOME, /usr/local/cuda, the library path). Null with `why` when
// there is none.
const Api* Load(const char** why);

}  // namespace cupti
}  // namespace mate

#endif  // MATE_DEVICE_CUPTI_H_
