#include "device/device_report.h"

#include <stdlib.h>

#include <vector>

#include "report/printer.h"
#include "report/report_event.h"
#include "report/report_file.h"
#include "report/violation.h"
#include "device/driver/cuda_driver.h"

namespace mate {
namespace device {

namespace {

// Device reports list allocations and launches with their stacks: larger
// than a host report's buffer, and never written in a signal handler.
constexpr size_t kJsonCap = 1 << 20;
constexpr int kPrinterTimeoutMs = 10000;

// A launcher's variable as a number; -1 where unset or not one.
int EnvNumber(const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long n = strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n < (1 << 30) ? static_cast<int>(n) : -1;
}

}  // namespace

std::string DeviceEventJson(const DeviceEvent& e) {
  DeviceDetail d;
  d.ordinal = e.device;
  d.rank = EnvNumber("RANK");
  d.local_rank = EnvNumber("LOCAL_RANK");
  d.world_size = EnvNumber("WORLD_SIZE");
  d.granule = e.granule;
  if (e.error) {
    d.error_name = cuda::ErrorName(e.error);
    d.error_text = cuda::ErrorText(e.error);
    d.found_by = e.where;
  }
  d.live = e.live.data();
  d.live_count = e.live.size();
  d.live_total = e.live_total;
  d.freed = e.freed.data();
  d.freed_count = e.freed.size();
  d.tracking = e.tracking;
  d.tracking_off = e.tracking_off.empty() ? nullptr : e.tracking_off.c_str();
  d.blocking = e.blocking;
  d.launches = e.launches.data();
  d.launch_count = e.launches.size();
  d.launches_total = e.launches_total;
  d.cross_stream = e.kind == ReportKind::kCrossStreamFree;
  d.free_stream = e.free_stream;
  d.use_stream = e.use_stream;
  d.use = e.has_use ? &e.use : nullptr;
  d.memory = e.has_memory ? &e.memory : nullptr;

  Violation v;
  v.kind = e.kind;
  v.access = AccessType::kNone;
  v.backend = "cuda";
  v.guard_method = "cuda-vmm";
  v.test_id = e.test_id;
  v.has_record = e.has_record;
  v.record = e.record;
  v.record.backend = SlotBackend::kCuda;
  v.geometry = GeometryOf(e.record, e.granule);
  v.damage = e.damage;
  v.process_allocations = e.allocations;
  v.process_peak_live = e.peak_live;
  v.process_fallbacks = e.fallbacks;
  v.device = &d;
  bool bad_free = e.kind == ReportKind::kDoubleFree || e.kind == ReportKind::kInvalidFree;
  if (bad_free) {
    v.address = e.address;
    if (e.has_record) {
      const SlotGeometry& g = v.geometry;
      if (e.address >= g.user_end) {
        v.relation = Relation::kPastEnd;
        v.distance = e.address - g.user_end + 1;
      } else if (e.address < g.user) {
        v.relation = Relation::kBeforeStart;
        v.distance = g.user - e.address;
      } else {
        v.relation = Relation::kInside;
        v.distance = e.address - g.user;
      }
    }
  }
  std::vector<char> buf(kJsonCap);
  Writer w(buf.data(), buf.size());
  FormatEvent(v, &w);
  return std::string(w.data(), w.size());
}

void FileAndPrint(const DeviceEvent& e, const std::string& json) {
  char path[4200];
  bool filed = WriteReportFile(json.data(), json.size(), path, sizeof(path));
  if (filed && RunPrinter(path, kPrinterTimeoutMs)) return;
  Violation v;
  v.kind = e.kind;
  v.has_record = e.has_record;
  v.record = e.record;
  v.test_id = e.test_id;
  PrintFallback(v, filed ? path : "");
}

}  // namespace device
}  // namespace mate
