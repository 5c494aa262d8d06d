#ifndef MATE_OPTIONS_OPTIONS_H_
#define MATE_OPTIONS_OPTIONS_H_

#include <cstdint>

namespace mate {

struct Options {
#define MATE_OPTION(type, field, js_name, def, desc) type field = def;
#include "options/options.inc"
#undef MATE_OPTION
};

}  // namespace mate

#endif  // MATE_OPTIONS_OPTIONS_H_
