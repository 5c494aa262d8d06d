#ifndef MATE_DEVICE_DEVICE_EVENT_H_
#define MATE_DEVICE_DEVICE_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/canary.h"
#include "core/slot.h"
#include "report/device_detail.h"
#include "report/report_kind.h"

namespace mate {
namespace device {

// What the device guard found, as plain data; device_report.cc turns it
// into the one report event (report/report_event.cc). Kinds: canary-corruption,
// illegal-address, invalid-free, double-free, cross-stream-free,
// out-of-memory.
struct DeviceEvent {
  ReportKind kind = ReportKind::kIllegalAddress;
  int device = 0;
  uint64_t granule = 0;
  uint32_t test_id = 0;  // test running when it was found
  // canary-corruption, invalid-free, double-free, cross-stream-free: the allocation.
  bool has_record = false;
  SlotRecord record{};
  CanaryDamage damage{};
  uint64_t address = 0;  // invalid-free / double-free: the pointer given
  // illegal-address: the driver's error and where it was seen, the
  // allocations live and recently freed then (most recent first), and the
  // launches that may have made the bad access.
  int error = 0;
  const char* where = "";
  std::vector<SlotRecord> live;
  std::vector<SlotRecord> freed;
  uint64_t live_total = 0;
  bool tracking = false;
  std::string tracking_off;
  bool blocking = false;
  uint64_t exact_launch = 0;  // launch blocking: the launch whose synchronize saw the error
  std::vector<DeviceLaunch> launches;
  uint64_t launches_total = 0;
  // cross-stream-free: the freeing stream, the stream whose use it did not
  // wait for, and the launch that used the memory there last.
  uintptr_t free_stream = 0;
  uintptr_t use_stream = 0;
  uint64_t use_launch = 0;  // its number (the guard adds the launch)
  bool has_use = false;
  DeviceLaunch use{};
  // out-of-memory: the request and the guard's accounting.
  bool has_memory = false;
  DeviceMemoryAccount memory{};
  // The process's counters, for a run summary written by a dead process.
  uint64_t allocations = 0, peak_live = 0, fallbacks = 0;
};

// Where the embedder wants events: Node keeps them for the next canary check
// (the test fails), a plain process files them and starts the printer.
// Called from any thread, never with the allocator's lock held.
class EventSink {
 public:
  virtual void OnEvent(const DeviceEvent& e) = 0;

 protected:
  ~EventSink() = default;
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_EVENT_H_
