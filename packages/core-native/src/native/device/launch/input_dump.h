#ifndef MATE_DEVICE_INPUT_DUMP_H_
#define MATE_DEVICE_INPUT_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report/device_detail.h"
#include "device/driver/cuda_driver.h"
#include "options/options.h"

// dumpInputs (--guard-dump-inputs <kernel glob>): before each launch of a
// matching kernel, the guarded allocations its pointer arguments point
// into are copied back from the GPU as they are then (the launch's stream
// synchronized first: everything queued before it is in) and saved in the
// run's report directory, so an illegal address can be studied with the
// kernel's exact inputs:
//   inputs/<pid>-<launch>-<k>.bin   the bytes of the k-th allocation
//   inputs/index-<pid>.jsonl        one JSON line per input, saved or not
// Bounded, so a matching kernel in a training loop cannot fill the disk:
// the first kDumpMaxBytesPerAllocation bytes of each allocation (marked
// truncated), at most kDumpMaxBytesPerProcess in all (later inputs get an
// index line saying they were not saved).
namespace mate {
namespace device {

constexpr uint64_t kDumpMaxBytesPerAllocation = 16ull << 20;
constexpr uint64_t kDumpMaxBytesPerProcess = 1ull << 30;

// One argument's allocation, as the launch found it.
struct DumpInput {
  uint32_t param = 0, offset = 0;
  uintptr_t value = 0;
  uint64_t alloc_id = 0;
  uintptr_t user = 0;
  uint64_t size = 0;
};

// What one launch is about: for the index.
struct DumpLaunch {
  uint64_t number = 0;
  const char* kernel = nullptr;
  const char* site = nullptr;  // JS or Python stack text
  const char* test = nullptr;
  cuda::CUstream stream = nullptr;
};

// The glob is the options' dumpInputs, read where it is (the options
// outlive the process's tracking): no copy of it to keep equal.
void ConfigureDump(const Options* options);
bool DumpingInputs();
// The kernel's name matches the glob (fnmatch), as the driver has it or
// demangled (as reports show C++ kernels). Asked once per kernel.
bool DumpWanted(const char* kernel);

// Saves each input (one per allocation) into the report directory and
// returns how many were saved; `out` gets the first `cap` of them.
// Called on the launching thread, outside the tracker's lock, with the
// guard's own driver calls marked internal by the caller.
size_t DumpInputs(const cuda::Driver* drv, const DumpLaunch& launch, const std::vector<DumpInput>& inputs,
                  DeviceLaunchInput* out, size_t cap);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_INPUT_DUMP_H_
