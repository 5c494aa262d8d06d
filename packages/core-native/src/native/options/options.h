#ifndef MATE_OPTIONS_OPTIONS_H_
#define MATE_OPTIONS_OPTIONS_H_

#include <cstdint>
#include <string>

#include "options/option_types.h"

namespace mate {

// The allocator's options: one field per row of the settings table that has
// a native side (options.inc is generated from that table).
struct Options {
#define MATE_OPTION(type, field, js_name, def) type field = def;
#include "options/options.inc"
#undef MATE_OPTION
};

// Freed bytes each backend keeps in quarantine when quarantineMaxBytes is
// unset: host slots hold address space only; CUDA ranges are unmapped, so
// they hold no GPU memory either and can be many more.
constexpr uint64_t kHostQuarantineBytes = 256ull << 20;
constexpr uint64_t kDeviceQuarantineBytes = 256ull << 30;

inline uint64_t QuarantineBytes(const Options& o, uint64_t backend_default) {
  return o.quarantine_max_bytes == kUnsetU64 ? backend_default : o.quarantine_max_bytes;
}

}  // namespace mate

#endif  // MATE_OPTIONS_OPTIONS_H_
