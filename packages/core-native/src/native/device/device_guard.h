#ifndef MATE_DEVICE_DEVICE_GUARD_H_
#define MATE_DEVICE_DEVICE_GUARD_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/driver/cuda_driver.h"
#include "device/allocator/device_allocator.h"
#include "device/allocator/device_event.h"
#include "device/launch/launch_tracker.h"

namespace mate {
namespace device {

// The process's device guard: one DeviceAllocator per GPU, made on first
// use, sharing one config and one event sink, and the launch tracker. The
// C ABI (mate_guard.h), the redirected CUDA calls, the PyTorch hooks and
// the Node binding all come here.

// Turns the guard on. False, with `error`, when there is no usable CUDA
// driver. A second call keeps the first config. Launch tracking that
// can't start leaves the guard on without it (TrackingOff() says why).
bool Install(const DeviceConfig& config, EventSink* sink, std::string* error);
bool Installed();
const cuda::Driver* Driver();  // after Install

// Supplies the host-side stack of an allocation (an interned StackStore id,
// 0 for none): the JS stack in Node, the Python stack in Python. Called on
// the allocating thread.
using StackProvider = uint32_t (*)();
void SetStackProvider(StackProvider provider);
// The same for frees (Node: the JS stack; the Python library keeps frees
// cheap and records none).
void SetFreeStackProvider(StackProvider provider);

// ordinal < 0: the device of the calling thread's current context, else 0.
cuda::CUresult Allocate(int ordinal, size_t size, cuda::CUstream stream, cuda::CUdeviceptr* out);
// Frees a guarded pointer in stream order; any other pointer with cuMemFree
// (or cuMemFreeAsync when `async`).
cuda::CUresult Free(cuda::CUdeviceptr ptr, cuda::CUstream stream, bool async);
cuda::CUresult RecordStream(cuda::CUdeviceptr ptr, cuda::CUstream stream);
bool Owns(cuda::CUdeviceptr ptr);
// A live guarded allocation shared with another process (DeviceAllocator::Export).
bool Export(cuda::CUdeviceptr ptr, ExportedRange* out, std::string* why);

// For the launch tracker: a cheap first test for a parameter word, then
// the allocation it points into (noting the use), and an argument resolved
// for a report.
bool MaybeGuarded(uint64_t value);
// Up to kMaxLaunchWords words of one launch, each MaybeGuarded, noted with
// each allocator's lock taken once: found[i] says out[i] is filled.
void NoteLaunchArgs(const uint64_t* values, uint32_t n, const StreamUse& use, ArgRef* out, bool* found);
// The allocation a parameter word points into, use not noted (input dumps).
bool FindLaunchArg(uint64_t value, ArgRef* out);
void ResolveArg(const ArgRef& ref, DeviceLaunchArg* out);
// A kernel's fault seen by a tracked call (`where`: the call), or by the
// synchronize after `exact_launch` (launch blocking): reported once.
void OnStickyError(cuda::CUresult err, const char* where, uint64_t exact_launch);

// Looks for a sticky error now (a check at the end of a test).
void CheckHealthAll(const char* where);
// Checks the canaries of every device's pending frees now (a check at the
// end of a test; see DeviceAllocator::CheckPendingNow).
void CheckPendingAll();

// Every device's counters added up; `granule` of the first device.
DeviceStats TotalStats();

// Stops the background threads and launch tracking before the driver's
// teardown (registered with atexit at install; embedders call it earlier
// where they can).
void ShutdownAll();

// Why the last call failed (thread-local), or why the guard is off.
const char* LastError();
void SetLastError(const char* text);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_GUARD_H_
