#ifndef MATE_REPORT_VIOLATION_H_
#define MATE_REPORT_VIOLATION_H_

#include <cstdint>

#include "core/canary.h"
#include "core/slot.h"
#include "report/native_frame.h"
#include "report/death_detail.h"
#include "report/device_detail.h"
#include "report/report_kind.h"

namespace mate {

enum class Relation : uint8_t { kPastEnd, kBeforeStart, kInside };

// Everything a report says, gathered before anything is written. Plain data:
// built in the signal handler as well as on the free path.
struct Violation {
  ReportKind kind = ReportKind::kWildAccess;
  AccessType access = AccessType::kNone;  // kNone: canary damage
  uintptr_t address = 0;                  // faulting address, 0 for canary damage
  Relation relation = Relation::kPastEnd;
  uint64_t distance = 0;  // bytes past the end / before the start / offset inside
  SlotRecord record{};
  SlotGeometry geometry{};
  CanaryDamage damage{};          // canary-corruption only
  const char* backend = "host";   // the record's: host / native-heap / cuda
  uint32_t free_call_frames = 0;  // a bad free: StackStore frames of the free call, 0 = none
  bool has_record = true;         // invalid free of a pointer that is no allocation's: false
  const char* guard_method = "";  // madvise-guard / mprotect
  uint32_t test_id = 0;           // test running when it was found
  int signal = 0;                 // non-zero when the process dies by it
  // The faulting thread's native frames (storage owned by the handler).
  const NativeFrame* access_frames = nullptr;
  size_t access_frame_count = 0;
  UnwindMethod unwind = UnwindMethod::kNone;
  // The process's counters when it was found (for the run summary when the
  // process dies before it can write them).
  uint64_t process_allocations = 0, process_peak_live = 0, process_fallbacks = 0;
  // The native heap's: allocation calls guarded, and those that went to libc.
  uint64_t process_native_allocations = 0, process_native_unguarded = 0;
  // deadly-signal and uncaught-exception reports (owned by the handler).
  const DeathDetail* death = nullptr;
  // CUDA reports: the device, and for illegal-address / cross-stream-free
  // what the device guard knows (owned by the caller).
  const DeviceDetail* device = nullptr;
};

}  // namespace mate

#endif  // MATE_REPORT_VIOLATION_H_
