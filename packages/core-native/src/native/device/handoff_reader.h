#ifndef MATE_DEVICE_HANDOFF_READER_H_
#define MATE_DEVICE_HANDOFF_READER_H_

#include <cstdint>
#include <string>

// The run's settings as a process without Node reads them: the handoff
// MATE_GUARD_SETTINGS (JSON, written by src/ts/settings/handoff.ts), only
// the few keys the device guard needs. Values were parsed and checked by the
// process that wrote it; a wrong type here means a foreign or stale handoff.
namespace mate {
namespace device {

struct HandoffSettings {
  bool tail_mode = true;
  uint32_t alignment = 16;
  bool log_allocations = false;
  bool capture_stacks = true;
  int sync_on_free = -1;       // -1: unset (the process's own default)
  bool strict_quarantine = false;
  bool track_launches = true;
  bool launch_blocking = false;
  uint64_t quarantine_max_count = 65536;
  std::string report_dir;
  bool owned = false;          // a run owner (guard-run) prints the summary
};

// False, with `error`, when `json` is not a handoff this version reads.
bool ReadHandoff(const char* json, HandoffSettings* out, std::string* error);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_HANDOFF_READER_H_
