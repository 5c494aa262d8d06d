#ifndef MATE_DEVICE_C_API_H_
#define MATE_DEVICE_C_API_H_

#include <cstddef>

// The C ABI of include/mate_guard.h (mate_guard_get_api), and the
// replacements for a module's own CUDA calls that redirection installs.
namespace mate {
namespace device {

// The one message graph capture is refused with while guarding is on.
extern const char* const kGraphCaptureRefused;

struct ReplacementEntry {
  const char* symbol;  // cudaMalloc, cuMemFree_v2, cudaStreamBeginCapture, ...
  void* fn;            // same signature as the CUDA function
};

// Every replacement: allocation calls go to the guard (passing through
// when it is off), graph capture is refused.
const ReplacementEntry* CudaReplacements(size_t* n);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_C_API_H_
