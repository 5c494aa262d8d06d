// Built only where cupti.h is found: pins the declarations of cupti.h to
// the toolkit's. Nothing here runs.
#include <cupti.h>

#include <cstddef>

#include "device/driver/cupti.h"

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
static_assert(int{kDomainDriver} == int{CUPTI_CB_DOMAIN_DRIVER_API}, "");
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
static_assert(driver::kLaunchCooperativeKernelPtsz == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, "");
static_assert(driver::kLaunchKernelEx == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "");
static_assert(driver::kLaunchKernelExPtsz == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "");

SAME_AT(LaunchConfig, CUlaunchConfig, hStream, hStream);
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
SAME_AT(EventStream_params, ::cuEventRecord_params, event, hEvent);
SAME_AT(EventStream_params, ::cuEventRecord_params, stream, hStream);
SAME_AT(EventStream_params, ::cuEventRecordWithFlags_params, stream, hStream);
SAME_AT(StreamEvent_params, ::cuStreamWaitEvent_params, stream, hStream);
SAME_AT(StreamEvent_params, ::cuStreamWaitEvent_params, event, hEvent);
SAME_AT(Stream_params, ::cuStreamSynchronize_params, stream, hStream);
SAME_AT(Event_params, ::cuEventSynchronize_params, event, hEvent);
SAME_AT(StreamCreate_params, ::cuStreamCreate_params, stream, phStream);
SAME_AT(StreamCreate_params, ::cuStreamCreate_params, flags, Flags);
SAME_AT(StreamCreate_params, ::cuStreamCreateWithPriority_params, flags, flags);

}  // namespace cupti
}  // namespace mate
