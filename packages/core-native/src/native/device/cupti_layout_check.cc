// Built only where cupti.h is found: pins the declarations of cupti.h to
// the toolkit's. Nothing here runs.
#include <cupti.h>



#include <cstddef>

#include "device/cupti.h"

namespace mate {
namespace cupti {

#define SAME_AT(ours, theirs, a, b) \
  static_assert(offsetof(ours, a) == offsetof(theirs, b), #ours "." #a " is misplaced")

static_assert(sizeof(CallbackData) == sizeof(CUpti_CallbackData), "CallbackData size");
SAME_AT(CallbackData, CUpti_CallbackData, callbackSite, callbackSite);
SAME_AT(CallbackData, CUpti_CallbackData, functionParams, functionParams);
SAME_AT(CallbackData, CUpti_CallbackData, functionReturnValue, functionReturnValue);
SAME_AT(CallbackData, CUpti_CallbackData, symbolName, symbolName);
SAME_AT(CallbackData, CUpti_CallbackData, context, context);
static_assert(int{kDomainDriver} == int{CUPTI_CB_DOMAIN_DRIVER_API} && int{kDomainRuntime} == int{CUPTI_CB_DOMAIN_RUNTIME_API}, "");
static_assert(int{kEnter} == int{CUPTI_API_ENTER} && int{kExit} == int{CUPTI_API_EXIT}, "");

static_assert(driver::kCtxSynchronize == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "");
static_assert(driver::kCtxSynchronizeV2 == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, "");
static_assert(driver::kEventRecord == CUPTI_DRIVER_TRACE_CBID_cuEventRecord, "");
static_assert(driver::kEventQuery == CUPTI_DRIVER_TRACE_CBID_cuEventQuery, "");
static_assert(driver::kEventSynchronize == CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, "");
static_assert(driver::kEventDestroy == CUPTI_DRIVER_TRACE_CBID_cuEventDestroy, "");
static_assert(driver::kEventDestroyV2 == CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2, "");
static_assert(driver::kStreamCreate == CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, "");
static_assert(driver::kStreamCreateWithPriority == CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority, "");
static_assert(driver::kStreamQuery == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, "");
static_assert(driver::kStreamQueryPtsz == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, "");
static_assert(driver::kStreamSynchronize == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "");
static_assert(driver::kStreamSynchronizePtsz == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, "");
static_assert(driver::kStreamWaitEvent == CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, "");
static_assert(driver::kStreamWaitEventPtsz == CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, "");
static_assert(driver::kEventRecordPtsz == CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz, "");
static_assert(driver::kEventRecordWithFlags == CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags, "");
static_assert(driver::kEventRecordWithFlagsPtsz == CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz, "");
static_assert(driver::kLaunchKernel == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "");
static_assert(driver::kLaunchKernelPtsz == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, "");
static_assert(driver::kLaunchCooperativeKernel == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, "");
static_assert(driver::kLaunchKernelEx == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "");
static_assert(driver::kLaunchKernelExPtsz == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "");

static_assert(runtime::kThreadSynchronize == CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020, "");
static_assert(runtime::kDeviceSynchronize == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "");
static_assert(runtime::kStreamCreate == CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, "");
static_assert(runtime::kStreamCreateWithFlags == CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, "");
static_assert(runtime::kStreamCreateWithPriority == CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050, "");
static_assert(runtime::kStreamSynchronize == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "");
static_assert(runtime::kStreamSynchronizePtsz == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, "");
static_assert(runtime::kStreamQuery == CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, "");
static_assert(runtime::kEventRecord == CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, "");
static_assert(runtime::kEventRecordPtsz == CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000, "");
static_assert(runtime::kEventRecordWithFlags == CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010, "");
static_assert(runtime::kEventRecordWithFlagsPtsz == CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010, "");
static_assert(runtime::kEventDestroy == CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020, "");
static_assert(runtime::kEventSynchronize == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, "");
static_assert(runtime::kEventQuery == CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, "");
static_assert(runtime::kStreamWaitEvent == CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, "");
static_assert(runtime::kStreamWaitEventPtsz == CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000, "");
static_assert(runtime::kLaunchKernel == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "");
static_assert(runtime::kLaunchKernelPtsz == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, "");
static_assert(runtime::kLaunchCooperativeKernel == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, "");
static_assert(runtime::kLaunchKernelExC == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "");
static_assert(runtime::kLaunchKernelExCPtsz == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, "");

SAME_AT(LaunchConfig, CUlaunchConfig, hStream, hStream);
SAME_AT(RtLaunchConfig, cudaLaunchConfig_t, stream, stream);
SAME_AT(cuLaunchKernel_params, ::cuLaunchKernel_params, f, f);
SAME_AT(cuLaunchKernel_params, ::cuLaunchKernel_params, hStream, hStream);
SAME_AT(cuLaunchKernel_params, ::cuLaunchKernel_params, kernelParams, kernelParams);
SAME_AT(cuLaunchKernel_params, ::cuLaunchKernel_params, extra, extra);
SAME_AT(cuLaunchKernel_params, ::cuLaunchCooperativeKernel_params, hStream, hStream);
SAME_AT(cuLaunchKernel_params, ::cuLaunchCooperativeKernel_params, kernelParams, kernelParams);
SAME_AT(cuLaunchKernelEx_params, ::cuLaunchKernelEx_params, config, config);
SAME_AT(cuLaunchKernelEx_params, ::cuLaunchKernelEx_params, f, f);
SAME_AT(cuLaunchKernelEx_params, ::cuLaunchKernelEx_params, kernelParams, kernelParams);
SAME_AT(cuLaunchKernelEx_params, ::cuLaunchKernelEx_params, extra, extra);
SAME_AT(cudaLaunchKernel_params, cudaLaunchKernel_v7000_params, func, func);
SAME_AT(cudaLaunchKernel_params, cudaLaunchKernel_v7000_params, args, args);
SAME_AT(cudaLaunchKernel_params, cudaLaunchKernel_v7000_params, stream, stream);
SAME_AT(cudaLaunchKernel_params, cudaLaunchCooperativeKernel_v9000_params, args, args);
SAME_AT(cudaLaunchKernel_params, cudaLaunchCooperativeKernel_v9000_params, stream, stream);
SAME_AT(cudaLaunchKernelExC_params, cudaLaunchKernelExC_v11060_params, config, config);
SAME_AT(cudaLaunchKernelExC_params, cudaLaunchKernelExC_v11060_params, func, func);
SAME_AT(cudaLaunchKernelExC_params, cudaLaunchKernelExC_v11060_params, args, args);
SAME_AT(EventStream_params, ::cuEventRecord_params, event, hEvent);
SAME_AT(EventStream_params, ::cuEventRecord_params, stream, hStream);
SAME_AT(EventStream_params, ::cuEventRecordWithFlags_params, stream, hStream);
SAME_AT(EventStream_params, cudaEventRecord_v3020_params, stream, stream);
SAME_AT(EventStream_params, cudaEventRecordWithFlags_v11010_params, stream, stream);
SAME_AT(StreamEvent_params, ::cuStreamWaitEvent_params, stream, hStream);
SAME_AT(StreamEvent_params, ::cuStreamWaitEvent_params, event, hEvent);
SAME_AT(StreamEvent_params, cudaStreamWaitEvent_v3020_params, event, event);
SAME_AT(Stream_params, ::cuStreamSynchronize_params, stream, hStream);
SAME_AT(Stream_params, cudaStreamSynchronize_v3020_params, stream, stream);
SAME_AT(Event_params, ::cuEventSynchronize_params, event, hEvent);
SAME_AT(Event_params, cudaEventSynchronize_v3020_params, event, event);
SAME_AT(StreamCreate_params, ::cuStreamCreate_params, stream, phStream);
SAME_AT(StreamCreate_params, ::cuStreamCreate_params, flags, Flags);
SAME_AT(StreamCreate_params, ::cuStreamCreateWithPriority_params, flags, flags);
SAME_AT(StreamCreate_params, cudaStreamCreateWithFlags_v5000_params, flags, flags);
SAME_AT(StreamCreate_params, cudaStreamCreateWithPriority_v5050_params, flags, flags);

}  // namespace cupti
}  // namespace mate
