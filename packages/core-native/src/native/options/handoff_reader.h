#ifndef MATE_OPTIONS_HANDOFF_READER_H_
#define MATE_OPTIONS_HANDOFF_READER_H_

#include <string>

#include "options/options.h"

// The run's settings as a process without Node reads them (the CUDA
// library under PyTorch): the handoff MATE_GUARD_SETTINGS (JSON, written
// by src/ts/settings/handoff.ts). Every field of the options table is read
// by its key (options.inc), so a setting added to the table reaches these
// processes with no change here. Values were parsed and checked by the
// process that wrote it; a wrong type here means a foreign or stale handoff.
namespace mate {

struct Handoff {
  Options options;
  std::string report_dir;
  bool owned = false;  // a run owner prints the summary (the handoff names one: run/owner.ts runsAlone, negated)
};

// False, with `error`, when `json` is not a handoff this version reads.
bool ReadHandoff(const char* json, Handoff* out, std::string* error);

}  // namespace mate

#endif  // MATE_OPTIONS_HANDOFF_READER_H_
