#ifndef MATE_TEST_CPP_FAKE_DEVICE_H_
#define MATE_TEST_CPP_FAKE_DEVICE_H_

// Device allocators over the simulated CUDA driver
// (packages/core-native/test/sim/fake_cuda.cc, built beside the test binary): host memory
// stands in for device memory, FAKE_CUDA_MEMORY_BYTES bounds it, and the
// "device" bytes of an allocation are written with the driver's memset.
// Shared by the device allocator's tests.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/driver/cuda_driver.h"
#include "device/allocator/device_allocator.h"

namespace fake_device {

using mate::ReportKind;
using mate::cuda::CUdeviceptr;
using mate::device::DeviceAllocator;
using mate::device::DeviceConfig;
using mate::device::DeviceEvent;
using mate::device::DeviceStats;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGranule = 2 * kMiB;  // the simulated driver's granularity
// What the simulated device holds in all. Nothing is touched until written:
// the memory squeezed out of the device below is only counted.
constexpr uint64_t kDeviceBytes = 2048 * kMiB;
// More granules than any size class the pool maps ahead (kMaxPreparedGranules).
constexpr size_t kLargeBytes = 520 * kMiB;

// The simulated driver, loaded once for the process. The bound is set
// before the first driver call and never again (the fake reads it at every
// call, from the allocators' threads too).
inline const mate::cuda::Driver* FakeDriver() {
  static const mate::cuda::Driver* drv = [] {
    setenv("FAKE_CUDA_MEMORY_BYTES", std::to_string(kDeviceBytes).c_str(), 1);
    setenv("MATE_GUARD_CUDA_DRIVER", MATE_FAKE_CUDA_LIB, 1);
    const char* why = nullptr;
    const mate::cuda::Driver* d = mate::cuda::Load(&why);
    if (d == nullptr)
      fprintf(stderr, "  the simulated driver %s did not load: %s\n", MATE_FAKE_CUDA_LIB, why ? why : "?");
    return d;
  }();
  return drv;
}

// Events as an embedder receives them (from any thread).
class Events final : public mate::device::EventSink {
 public:
  void OnEvent(const DeviceEvent& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }
  std::vector<DeviceEvent> Of(ReportKind kind) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<DeviceEvent> out;
    for (const DeviceEvent& e : events_)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
  size_t Count() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_.size();
  }

 private:
  std::mutex mu_;
  std::vector<DeviceEvent> events_;
};

// Small bounds: the defaults (a 1 TiB reservation, a 1 GiB pool) are a GPU's.
inline DeviceConfig SmallConfig() {
  DeviceConfig c;
  c.reserve_bytes = 1024 * kMiB;
  c.prepare_budget_bytes = 32 * kMiB;
  c.prepare_ahead = 8;
  c.idle_chunk_bytes = 16 * kMiB;
  return c;
}

// One allocator on the simulated device 0, its background thread stopped
// at the end of the test (the allocator itself lives on, as on a GPU).
struct Device {
  Events events;
  DeviceAllocator* a = nullptr;
  explicit Device(const DeviceConfig& config) {
    const mate::cuda::Driver* drv = FakeDriver();
    std::string error;
    // No hooks: the allocator alone, none of the layers above it.
    if (drv != nullptr) a = DeviceAllocator::Create(drv, 0, config, &events, mate::device::AllocatorHooks{}, &error);
    if (drv != nullptr && a == nullptr) fprintf(stderr, "  DeviceAllocator::Create: %s\n", error.c_str());
  }
  ~Device() {
    if (a != nullptr) a->Shutdown();
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // A guarded allocation on the legacy default stream, or 0.
  CUdeviceptr Alloc(size_t size) {
    CUdeviceptr p = 0;
    bool guarded = false;
    if (a->Allocate(size, nullptr, 0, &p, &guarded) != mate::cuda::kSuccess || !guarded) return 0;
    return p;
  }
  bool Free(CUdeviceptr p) { return a->Free(p, nullptr, 0) == mate::FreeStatus::kFreed; }
  // The allocation's bytes (or its neighbours') written in device memory.
  void Write(CUdeviceptr p, uint8_t value, size_t n) { FakeDriver()->cuMemsetD8Async(p, value, n, nullptr); }
};

// Memory held in ranges mapped ahead (ready or being mapped) while no
// free is pending and no chunk is pooled: what the device holds beyond
// the live allocations.
inline uint64_t PoolBytes(const DeviceStats& s) { return s.physical_bytes - s.live_granules * s.granule; }

// A function only the simulated driver has (the tests' handle on it), or
// nullptr.
template <class F>
inline F FakeOnly(const char* name) {
  void* lib = dlopen(MATE_FAKE_CUDA_LIB, RTLD_NOW | RTLD_NOLOAD);
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

// Memsets and device-to-host copies the simulated driver has made so far
// (the guard's canary fills and readbacks, and the tests' own Writes).
struct CopyCalls {
  unsigned long long memsets = 0, dtoh_copies = 0;
};
inline CopyCalls FakeCopyCalls() {
  CopyCalls c;
  auto calls = FakeOnly<void (*)(unsigned long long*, unsigned long long*)>("fake_cuda_copy_calls");
  if (calls) calls(&c.memsets, &c.dtoh_copies);
  return c;
}

// Polls `cond` until it holds (the background thread works on its own
// time); false after `ms`. Generous: the tier also runs under qemu.
template <class F>
inline bool WaitFor(F cond, int ms = 20000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The largest PoolBytes seen over `ms` of the background thread's work.
inline uint64_t MostPooledOver(DeviceAllocator* a, int ms) {
  uint64_t most = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    most = std::max(most, PoolBytes(a->Stats()));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return most;
}

// Every free so far finished by the background thread: recycled to ready
// or unmapped into quarantine (whose bounds the tests never reach).
inline bool FreesSettled(DeviceAllocator* a) {
  DeviceStats s = a->Stats();
  return s.recycled + s.quarantined == s.frees;
}

// The ranges mapped ahead and ready now add up to `bytes`, within WaitFor's time.
inline bool ReadyBytesReach(DeviceAllocator* a, uint64_t bytes) {
  return WaitFor([&] { return a->Stats().ready_bytes == bytes; });
}

// The end of a range's data (its guard, in tail mode): the same for every
// size of one class, so it names the range whatever size it holds.
inline uint64_t RangeOf(CUdeviceptr p, size_t size) { return (p + size + kGranule - 1) / kGranule * kGranule; }

// Eats device memory with a plain allocation so that `left` bytes stay free; 0 if it cannot.
inline CUdeviceptr Squeeze(uint64_t left) {
  size_t free_b = 0, total_b = 0;
  if (FakeDriver()->cuMemGetInfo(&free_b, &total_b) != mate::cuda::kSuccess || free_b <= left) return 0;
  CUdeviceptr p = 0;
  return FakeDriver()->cuMemAlloc(&p, free_b - left) == mate::cuda::kSuccess ? p : 0;
}

}  // namespace fake_device

#endif  // MATE_TEST_CPP_FAKE_DEVICE_H_
