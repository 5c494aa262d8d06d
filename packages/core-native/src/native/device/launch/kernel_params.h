#ifndef MATE_DEVICE_KERNEL_PARAMS_H_
#define MATE_DEVICE_KERNEL_PARAMS_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "device/driver/cuda_driver.h"

// Kernels as the launch tracker reads them: a name, and the layout of the
// parameters (offset and size of each), asked of the driver once per
// function, so a launch's parameter words can be checked for pointers into
// guarded allocations. Not locked: the launch tracker's lock guards it.
namespace mate {
namespace device {

struct KernelParam {
  uint32_t offset, size;
};

struct Kernel {
  uint32_t name = 0;    // StackStore id
  bool layout = false;  // parameter layout known
  std::vector<KernelParam> params;
};

class KernelTable {
 public:
  // The kernel of `f` (a CUfunction, or a CUkernel: the CUDA runtime's
  // context-independent kernels); `symbol` is CUPTI's name for it, if any.
  const Kernel& Of(const cuda::Driver* drv, cuda::CUfunction f, const char* symbol);

 private:
  std::unordered_map<const void*, Kernel> kernels_;
};

// The packed parameter buffer of a launch given through `extra`, or nullptr.
const uint8_t* ExtraBuffer(void** extra);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_KERNEL_PARAMS_H_
