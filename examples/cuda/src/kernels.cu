#include "kernels.h"

// The kernels have plain C++ names (outside any namespace): reports show
// them as the driver knows them, demangled.
__global__ void Fill(float* p, long n, float value) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = value;
}

__global__ void FillInclusive(float* p, long n, float value) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i <= n) p[i] = value;  // bug: should be i < n
}

__global__ void SmoothFromMinusOne(float* p, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i - 1] = 0.5f * p[i - 1];  // bug: i - 1 is -1 for the first element
}

__global__ void AddInto(float* dst, const float* src, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] += src[i];
}

__global__ void Sum(const float* p, long n, float* out) {
  float s = 0;
  for (long i = threadIdx.x; i < n; i += blockDim.x) s += p[i];
  atomicAdd(out, s);
}

__global__ void SlowTouch(float* p, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  p[0] += 1.0f;
}

namespace {

unsigned Blocks(long n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

cudaError_t LaunchFill(float* p, long n, float value, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  Fill<<<Blocks(n), 256, 0, stream>>>(p, n, value);
  return cudaGetLastError();
}

cudaError_t LaunchFillInclusive(float* p, long n, float value, cudaStream_t stream) {
  FillInclusive<<<Blocks(n + 1), 256, 0, stream>>>(p, n, value);
  return cudaGetLastError();
}

cudaError_t LaunchSmoothFromMinusOne(float* p, long n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  SmoothFromMinusOne<<<Blocks(n), 256, 0, stream>>>(p, n);
  return cudaGetLastError();
}

cudaError_t LaunchAddInto(float* dst, const float* src, long n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AddInto<<<Blocks(n), 256, 0, stream>>>(dst, src, n);
  return cudaGetLastError();
}

cudaError_t LaunchSum(const float* p, long n, float* out, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(out, 0, sizeof(float), stream);
  if (e != cudaSuccess) return e;
  Sum<<<1, 256, 0, stream>>>(p, n, out);
  return cudaGetLastError();
}

cudaError_t LaunchSlowTouch(float* p, long long cycles, cudaStream_t stream) {
  SlowTouch<<<1, 1, 0, stream>>>(p, cycles);
  return cudaGetLastError();
}
