#ifndef CUDA_EXAMPLE_KERNELS_H_
#define CUDA_EXAMPLE_KERNELS_H_

#include <cuda_runtime.h>

// p[0] .. p[n - 1] = value.
cudaError_t LaunchFill(float* p, long n, float value, cudaStream_t stream);
// Planted bug: `<=` in the bound, writes p[0] .. p[n], one float past the end.
cudaError_t LaunchFillInclusive(float* p, long n, float value, cudaStream_t stream);
// Planted bug: a stencil that reads p[i - 1] for i = 0 .. n - 1 and writes
// back there: touches one float before the start.
cudaError_t LaunchSmoothFromMinusOne(float* p, long n, cudaStream_t stream);
// dst[i] += src[i] for i < n.
cudaError_t LaunchAddInto(float* dst, const float* src, long n, cudaStream_t stream);
// *out = sum of p[0] .. p[n - 1] (device memory, zeroed first).
cudaError_t LaunchSum(const float* p, long n, float* out, cudaStream_t stream);
// Spins about `us` microseconds on the GPU, then writes p[0] (a use that
// stays in flight for a while).
cudaError_t LaunchSlowTouch(float* p, long long cycles, cudaStream_t stream);

#endif  // CUDA_EXAMPLE_KERNELS_H_
