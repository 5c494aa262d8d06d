// A guarded allocation shared with another process (device_ipc.cc): its
// chunk exported as a file descriptor and mapped again, over the simulated
// CUDA driver (fake_device.h), where a chunk is a memfd and the second
// mapping sees the same bytes, as a second process's would.
#include <stdint.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "device/allocator/device_allocator.h"
#include "device/allocator/device_ipc.h"
#include "fake_device.h"

using namespace fake_device;  // NOLINT: the tests' vocabulary
using mate::device::ExportedRange;
using mate::device::MapShared;
using mate::device::SharedMapping;
using mate::device::UnmapShared;

namespace {

// The byte at `off` of a mapping (host memory under the simulated driver).
uint8_t ByteAt(CUdeviceptr p, uint64_t off) { return *reinterpret_cast<const volatile uint8_t*>(p + off); }

// What the receiving process does with an exported range: maps it with the
// sender's layout, then closes the descriptor (the mapping keeps the chunk).
bool MapExported(const ExportedRange& r, SharedMapping* m) {
  std::string why;
  bool ok = MapShared(FakeDriver(), 0, static_cast<int>(r.fd), r.chunk_bytes, r.granule, r.guard_before != 0, m, &why);
  close(static_cast<int>(r.fd));
  return ok;
}

}  // namespace

TEST(a_shared_allocation_maps_elsewhere_with_the_same_bytes_and_its_guard_on_the_same_side) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr p = d.Alloc(1000);
  CHECK(p != 0);
  d.Write(p, 0x5a, 1000);
  ExportedRange r;
  std::string why;
  CHECK(d.a->Export(p, &r, &why));
  CHECK(r.fd >= 0);
  CHECK_EQ(r.size, 1000u);
  CHECK_EQ(r.granule, kGranule);
  CHECK_EQ(r.chunk_bytes, kGranule);
  // Tail mode: the allocation ends at the chunk's end (16-byte aligned),
  // the guard granule after it.
  CHECK(!r.guard_before);
  CHECK(r.offset + r.size <= r.chunk_bytes);
  CHECK(r.chunk_bytes - (r.offset + r.size) < 16);
  SharedMapping m;
  CHECK(MapExported(r, &m));
  CHECK_EQ(m.reserved_bytes, r.chunk_bytes + r.granule);
  CHECK_EQ(m.data, m.reserved);
  CHECK_EQ(ByteAt(m.data, r.offset), 0x5a);
  CHECK_EQ(ByteAt(m.data, r.offset + 999), 0x5a);
  // Written there, seen here.
  d.Write(m.data + r.offset, 0x33, 10);
  CHECK_EQ(ByteAt(p, 0), 0x33);
  CHECK_EQ(d.a->Stats().exported, 1u);
  CHECK(d.Free(p));
  UnmapShared(FakeDriver(), m);
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(a_shared_chunk_is_released_at_free_and_never_handed_to_another_allocation) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr p = d.Alloc(4096);
  CHECK(p != 0);
  d.Write(p, 0x5a, 4096);
  ExportedRange r;
  std::string why;
  CHECK(d.a->Export(p, &r, &why));
  SharedMapping m;
  CHECK(MapExported(r, &m));
  CHECK(d.Free(p));
  CHECK(WaitFor([&] { return FreesSettled(d.a); }));
  CHECK_EQ(d.a->Stats().recycled, 0u);
  // Released, not pooled (the other process's mapping keeps the memory):
  // allocations of the same size, freed and made again, write elsewhere,
  // and the shared bytes stay the sender's last.
  for (int round = 0; round < 20; round++) {
    std::vector<CUdeviceptr> more;
    for (int i = 0; i < 8; i++) {
      CUdeviceptr q = d.Alloc(4096);
      CHECK(q != 0);
      d.Write(q, 0xee, 4096);
      more.push_back(q);
    }
    for (CUdeviceptr q : more) CHECK(d.Free(q));
  }
  CHECK(WaitFor([&] { return FreesSettled(d.a); }));
  for (uint64_t off : {uint64_t{0}, uint64_t{2048}, uint64_t{4095}}) CHECK_EQ(ByteAt(m.data, r.offset + off), 0x5a);
  UnmapShared(FakeDriver(), m);
  CHECK_EQ(d.events.Count(), 0u);
}

TEST(only_a_live_guarded_allocation_can_be_shared) {
  Device d(SmallConfig());
  CHECK(d.a != nullptr);
  if (d.a == nullptr) return;
  CUdeviceptr p = d.Alloc(64);
  CHECK(p != 0);
  CHECK(d.Free(p));
  ExportedRange r;
  std::string why;
  CHECK(!d.a->Export(p, &r, &why));
  CHECK(why == "the pointer is not a live guarded allocation");
  CHECK(!d.a->Export(0x1234, &r, &why));
  CHECK_EQ(d.a->Stats().exported, 0u);
}
