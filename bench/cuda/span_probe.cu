// Can freed device ranges be unmapped, and fresh ones mapped and opened,
// several per driver call (a "span")? The device guard gives every range an
// unmapped guard gap, so a span of ranges has holes. This probe asks the
// driver, on the GPU at hand, for one call over K ranges laid out
//   adjacent:   [r0][r1]...[rK-1]            (no guards: for the cost only)
//   guarded:    [r0][gap][r1][gap]...         (the guard's layout)
// and times one range per call against one call per span.
// Build and run (the stubs folder where libcuda.so is not on the linker's path):
//   nvcc -O2 -o /tmp/span_probe bench/cuda/span_probe.cu -L/usr/local/cuda/lib64/stubs -lcuda && /tmp/span_probe
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <vector>

static double Now() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define CHECK(x)                                         \
  do {                                                   \
    CUresult r_ = (x);                                   \
    if (r_ != CUDA_SUCCESS) {                            \
      const char* s_ = nullptr;                          \
      cuGetErrorName(r_, &s_);                           \
      std::printf("%s failed: %s\n", #x, s_ ? s_ : "?"); \
      return 1;                                          \
    }                                                    \
  } while (0)

int main() {
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t g = 0;
  CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const int K = 8, ROUNDS = 200;
  std::vector<CUmemGenericAllocationHandle> h(K);
  for (auto& x : h) CHECK(cuMemCreate(&x, g, &prop, 0));
  CUdeviceptr va;
  CHECK(cuMemAddressReserve(&va, 2 * K * g, g, 0, 0));
  char name[256];
  cuDeviceGetName(name, sizeof name, dev);
  int drv = 0;
  cuDriverGetVersion(&drv);
  std::printf("%s, driver API %d, granularity %zu, K=%d ranges, %d rounds\n", name, drv, g, K, ROUNDS);
  for (int stride : {2, 1}) {  // 2: a guard gap after every range; 1: adjacent
    const char* layout = stride == 2 ? "guarded (gap after each range)" : "adjacent (no gaps)";
    size_t span = ((K - 1) * stride + 1) * g;
    auto at = [&](int i) { return va + static_cast<CUdeviceptr>(i) * stride * g; };  // range i's start
    // One range per call: map + set access, then unmap.
    double t0 = Now();
    for (int r = 0; r < ROUNDS; r++) {
      for (int i = 0; i < K; i++) {
        CHECK(cuMemMap(at(i), g, 0, h[i], 0));
        CHECK(cuMemSetAccess(at(i), g, &access, 1));
      }
      for (int i = 0; i < K; i++) CHECK(cuMemUnmap(at(i), g));
    }
    double per = (Now() - t0) / (ROUNDS * K);
    // One call per span for the access and the unmap (the maps stay one per range).
    for (int i = 0; i < K; i++) CHECK(cuMemMap(at(i), g, 0, h[i], 0));
    CUresult set = cuMemSetAccess(va, span, &access, 1);
    CUresult unmap = cuMemUnmap(va, span);
    const char *set_s = nullptr, *unmap_s = nullptr;
    cuGetErrorName(set, &set_s);
    cuGetErrorName(unmap, &unmap_s);
    std::printf(
        "%s: one range per call %.1f us a range (map + set access + unmap); "
        "one cuMemSetAccess over the span: %s; one cuMemUnmap over the span: %s\n",
        layout, per, set_s, unmap_s);
    if (unmap != CUDA_SUCCESS)
      for (int i = 0; i < K; i++) cuMemUnmap(at(i), g);
    if (set != CUDA_SUCCESS || unmap != CUDA_SUCCESS) continue;
    // Did the one call really reach every range? Access as the driver
    // reports it and a memset into each range, then after the one unmap,
    // no range still mapped.
    for (int i = 0; i < K; i++) CHECK(cuMemMap(at(i), g, 0, h[i], 0));
    CHECK(cuMemSetAccess(va, span, &access, 1));
    int granted = 0, written = 0, still_mapped = 0;
    for (int i = 0; i < K; i++) {
      unsigned long long flags = 0;
      CUmemLocation loc = prop.location;
      if (cuMemGetAccess(&flags, &loc, at(i)) == CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) granted++;
      if (cuMemsetD8(at(i), 0x5A, g) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS) written++;
    }
    CHECK(cuMemUnmap(va, span));
    for (int i = 0; i < K; i++) {
      CUmemGenericAllocationHandle back;
      if (cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(at(i))) == CUDA_SUCCESS) {
        still_mapped++;
        cuMemRelease(back);
      }
    }
    std::printf("%s: after one set access, %d of %d ranges read/write (%d written); after one unmap, %d still mapped\n",
                layout, granted, K, written, still_mapped);
    // Timings: both per span; access per span with unmaps per range; the
    // reverse. A span's set access that left ranges closed times nothing
    // real: only the per-range access variant runs then.
    for (int variant = granted == K ? 0 : 2; variant < 3; variant++) {
      double t1 = Now();
      for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < K; i++) {
          CHECK(cuMemMap(at(i), g, 0, h[i], 0));
          if (variant == 2) CHECK(cuMemSetAccess(at(i), g, &access, 1));
        }
        if (variant != 2) CHECK(cuMemSetAccess(va, span, &access, 1));
        if (variant == 1) {
          for (int i = 0; i < K; i++) CHECK(cuMemUnmap(at(i), g));
        } else {
          CHECK(cuMemUnmap(va, span));
        }
      }
      static const char* what[] = {"set access and unmap once per span", "set access once per span, unmap per range",
                                   "set access per range, unmap once per span"};
      std::printf("%s: %s (%d ranges): %.1f us a range\n", layout, what[variant], K, (Now() - t1) / (ROUNDS * K));
    }
  }
  return 0;
}
