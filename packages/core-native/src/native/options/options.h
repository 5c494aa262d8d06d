#ifndef MATE_OPTIONS_OPTIONS_H_
#define MATE_OPTIONS_OPTIONS_H_

#include <cstdint>

#include "core/mode.h"

namespace mate {

// The allocator's options: one field per row of the settings table that has
// a native side (options.inc is generated from that table).
struct Options {
#define MATE_OPTION(type, field, js_name, def) type field = def;
#include "options/options.inc"
#undef MATE_OPTION
};

}  // namespace mate

#endif  // MATE_OPTIONS_OPTIONS_H_
