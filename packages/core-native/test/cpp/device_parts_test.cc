// Device parts that need no GPU: the per-stream clocks behind the
// record_stream rule (device/stream_clocks), and reading a kernel's
// parameters (device/kernel_params), over a driver table of stand-ins.
#include <cstdint>
#include <cstring>

#include "check.h"
#include "device/launch/kernel_params.h"
#include "device/launch/stream_clocks.h"

namespace {

using mate::cuda::CUevent;
using mate::cuda::CUfunction;
using mate::cuda::CUresult;
using mate::cuda::CUstream;

CUresult NonBlockingFlags(CUstream, unsigned* flags) {
  *flags = mate::cuda::kStreamNonBlocking;
  return 0;
}

mate::cuda::Driver StreamDriver() {
  mate::cuda::Driver d{};
  d.cuStreamGetFlags = &NonBlockingFlags;
  return d;
}

CUstream Stream(uintptr_t n) { return reinterpret_cast<CUstream>(0x1000 + n); }
CUevent Event(uintptr_t n) { return reinterpret_cast<CUevent>(0x2000 + n); }

// A kernel of three parameters: a pointer, a 3 KiB struct by value, an int.
CUresult ThreeParams(CUfunction, size_t i, size_t* off, size_t* size) {
  static const size_t offs[] = {0, 8, 3080}, sizes[] = {8, 3072, 4};
  if (i >= 3) return 1;
  *off = offs[i];
  *size = sizes[i];
  return 0;
}

CUresult Named(const char** name, CUfunction) {
  *name = "_Z4fillPfl";
  return 0;
}

}  // namespace

TEST(a_launch_on_another_stream_is_unordered_until_an_event_is_waited_for) {
  mate::cuda::Driver d = StreamDriver();
  mate::device::StreamClocks c;
  c.SetDriver(&d);
  c.StreamCreated(Stream(1), mate::cuda::kStreamNonBlocking);
  c.StreamCreated(Stream(2), mate::cuda::kStreamNonBlocking);
  mate::device::StreamUse use = c.Launch(Stream(2), false);
  CHECK(!c.Ordered(Stream(1), use));
  CHECK(c.Ordered(Stream(2), use));  // the same stream runs in order
  c.EventRecorded(Event(1), Stream(2), false);
  c.StreamWaited(Stream(1), Event(1), false);
  CHECK(c.Ordered(Stream(1), use));
  CHECK(!c.Finished(use.stream, use.seq));
}

TEST(an_event_recorded_before_the_launch_orders_nothing_after_it) {
  mate::cuda::Driver d = StreamDriver();
  mate::device::StreamClocks c;
  c.SetDriver(&d);
  c.EventRecorded(Event(1), Stream(2), false);
  mate::device::StreamUse use = c.Launch(Stream(2), false);
  c.StreamWaited(Stream(1), Event(1), false);
  CHECK(!c.Ordered(Stream(1), use));
}

TEST(a_host_synchronize_orders_every_stream_after_what_it_waited_for) {
  mate::cuda::Driver d = StreamDriver();
  mate::device::StreamClocks c;
  c.SetDriver(&d);
  mate::device::StreamUse a = c.Launch(Stream(2), false);
  mate::device::StreamUse b = c.Launch(Stream(3), false);
  c.StreamDone(Stream(2), false);
  CHECK(c.Ordered(Stream(1), a));
  CHECK(c.Finished(a.stream, a.seq));
  CHECK(!c.Ordered(Stream(1), b));
  c.ContextDone();
  CHECK(c.Ordered(Stream(1), b));
}

TEST(the_legacy_default_stream_synchronizes_with_blocking_streams_only) {
  mate::cuda::Driver d = StreamDriver();
  mate::device::StreamClocks c;
  c.SetDriver(&d);
  c.StreamCreated(Stream(1), 0);  // blocking
  c.StreamCreated(Stream(2), mate::cuda::kStreamNonBlocking);
  mate::device::StreamUse on_blocking = c.Launch(Stream(1), false);
  mate::device::StreamUse on_nonblocking = c.Launch(Stream(2), false);
  CHECK(c.Ordered(nullptr, on_blocking));
  CHECK(!c.Ordered(nullptr, on_nonblocking));
}

TEST(a_kernels_parameter_layout_is_asked_once_and_names_it) {
  mate::cuda::Driver d{};
  d.cuFuncGetParamInfo = &ThreeParams;
  d.cuFuncGetName = &Named;
  mate::device::KernelTable table;
  CUfunction f = reinterpret_cast<CUfunction>(0x42);
  const mate::device::Kernel& k = table.Of(&d, f, nullptr);
  CHECK(k.layout);
  CHECK_EQ(k.params.size(), 3u);
  CHECK_EQ(k.params[1].offset, 8u);
  CHECK_EQ(k.params[1].size, 3072u);  // a struct by value: its words are scanned for pointers too
  CHECK(&table.Of(&d, f, nullptr) == &k);
}

TEST(a_kernel_the_driver_cannot_describe_has_no_layout) {
  mate::cuda::Driver d{};
  mate::device::KernelTable table;
  const mate::device::Kernel& k = table.Of(&d, reinterpret_cast<CUfunction>(0x43), "triton_kernel");
  CHECK(!k.layout);
  CHECK(k.params.empty());
}

TEST(a_launch_given_one_packed_buffer_through_extra_is_read_from_it) {
  uint8_t buffer[16] = {};
  size_t size = sizeof(buffer);
  void* extra[] = {reinterpret_cast<void*>(1), buffer, reinterpret_cast<void*>(2), &size, nullptr};
  CHECK(mate::device::ExtraBuffer(extra) == buffer);
  void* none[] = {nullptr};
  CHECK(mate::device::ExtraBuffer(none) == nullptr);
  CHECK(mate::device::ExtraBuffer(nullptr) == nullptr);
}
