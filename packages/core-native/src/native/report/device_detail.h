#ifndef MATE_REPORT_DEVICE_DETAIL_H_
#define MATE_REPORT_DEVICE_DETAIL_H_

#include <cstddef>
#include <cstdint>

#include "core/slot.h"

namespace mate {

// What a device (CUDA) report says beyond the host fields: plain data the
// device guard fills and FormatEvent writes as the event's `device`,
// `candidates`, `launches` and `streams` (src/ts/report/event.ts).

// A kernel argument that points into a guarded allocation.
struct DeviceLaunchArg {
  uint32_t param = 0;       // parameter index
  uint32_t offset = 0;      // byte offset of the pointer inside the parameter
  uint32_t param_size = 0;  // the parameter's size: > 8, a struct passed by value
  uintptr_t value = 0;      // the pointer
  SlotRecord record{};      // the allocation it points into (as it was when looked up)
  bool freed = false;       // that allocation was already freed (its range unmapped)
};

constexpr size_t kMaxDeviceLaunchArgs = 8;

// An input saved before the launch (dumpInputs: device/launch/input_dump.h), in
// inputs/<pid>-<launch>-<index>.bin of the report directory.
struct DeviceLaunchInput {
  uint32_t param = 0;  // the first parameter that pointed into it
  uint32_t index = 0;  // the file's index among the launch's inputs
  uint64_t alloc_id = 0;
  uint64_t size = 0;   // the allocation's size
  uint64_t saved = 0;  // bytes saved (fewer than size: truncated at the cap)
};

constexpr size_t kMaxDeviceLaunchInputs = 8;

// One tracked kernel launch.
struct DeviceLaunch {
  uint64_t number = 0;  // launch number, process-wide, 1-based
  uint32_t kernel = 0;  // StackStore id of the kernel's (mangled) name
  uintptr_t stream = 0;
  uint32_t site = 0;       // StackStore id of the JS or Python call site, 0 = none
  uint32_t test = 0;       // test running at the launch
  bool faulted = false;    // launch blocking: its synchronize returned the error
  uint32_t arg_count = 0;  // guarded pointers found (args[] holds the first few)
  DeviceLaunchArg args[kMaxDeviceLaunchArgs];
  uint32_t input_count = 0;  // inputs saved before it (dumpInputs)
  DeviceLaunchInput inputs[kMaxDeviceLaunchInputs];
};

// out-of-memory: the request that failed and what the guard held then, in
// the spirit of the caching allocator's message (bytes throughout).
struct DeviceMemoryAccount {
  uint64_t requested = 0;
  uint64_t live_count = 0;
  uint64_t live_bytes = 0;   // requested bytes of live guarded allocations
  uint64_t live_mapped = 0;  // granules those hold (rounding + canary slack)
  uint64_t quarantined_count = 0;
  uint64_t quarantined_bytes = 0;  // address space only: quarantined ranges are unmapped
  uint64_t pending_bytes = 0;      // freed, unmapping pending (the GPU still used them)
  uint64_t pooled_bytes = 0;       // physical chunks kept for reuse, not in use
  uint64_t ready_bytes = 0;        // ranges mapped ahead for common sizes
  uint64_t given_back = 0;         // released before the one retry
  uint64_t device_total = 0;
  uint64_t device_free = 0;
  uint64_t failures = 0;  // allocations that failed so far in this process (this one included)
};

struct DeviceDetail {
  int ordinal = 0;
  // A multi-process job's place (RANK, LOCAL_RANK, WORLD_SIZE as torchrun
  // and the launchers set them); -1 where unset.
  int rank = -1, local_rank = -1, world_size = -1;
  uint64_t granule = 0;  // the slot "page": one mapping granule
  // illegal-address: the driver's error and who saw it first.
  const char* error_name = nullptr;
  const char* error_text = nullptr;
  const char* found_by = nullptr;
  // illegal-address: allocations live and recently freed then, newest first.
  const SlotRecord* live = nullptr;
  size_t live_count = 0;
  uint64_t live_total = 0;
  const SlotRecord* freed = nullptr;
  size_t freed_count = 0;
  // Launch tracking: whether it was on (else why not), launch blocking, and
  // the launches the report names (in flight since the last synchronize, or
  // the faulting one), newest first.
  bool tracking = false;
  const char* tracking_off = nullptr;
  bool blocking = false;
  const DeviceLaunch* launches = nullptr;
  size_t launch_count = 0;
  uint64_t launches_total = 0;
  // cross-stream-free: the freeing stream, the stream that used the memory,
  // and the launch that used it there last (null when it left the record).
  bool cross_stream = false;
  uintptr_t free_stream = 0;
  uintptr_t use_stream = 0;
  const DeviceLaunch* use = nullptr;
  // out-of-memory: the accounting.
  const DeviceMemoryAccount* memory = nullptr;
};

}  // namespace mate

#endif  // MATE_REPORT_DEVICE_DETAIL_H_
