#ifndef MATE_BENCH_CUDA_SIM_FAKE_KERNEL_H_
#define MATE_BENCH_CUDA_SIM_FAKE_KERNEL_H_

#include <stddef.h>

// The simulated driver's kernels (fake_cuda.cc), as the programs that
// launch them (matrix.cc, track_cost.cc) declare them: one layout for all.
// A name and its parameters' sizes; a CUfunction points at one.
struct FakeFunc {
  const char* name;
  int n;
  size_t sizes[16];
};

// fake_launch and fake_stream_create, looked up with dlsym.
using FakeLaunch = int (*)(FakeFunc*, void*, void**);
using FakeStreamCreate = int (*)(void**, unsigned);

#endif  // MATE_BENCH_CUDA_SIM_FAKE_KERNEL_H_
