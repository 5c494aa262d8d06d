#ifndef MATE_OPTIONS_OPTION_TYPES_H_
#define MATE_OPTIONS_OPTION_TYPES_H_

#include <cstdint>

#include "core/mode.h"

// The C++ types of the settings table's native fields besides bool and
// integers (options.inc names them): each choice row is an enum of the
// same name, one constant per allowed value.
namespace mate {

// An optional boolean: unset leaves it to the process (syncOnFree: on in
// Node, off in Python).
enum class Tristate : int8_t { kUnset = -1, kOff = 0, kOn = 1 };

inline bool TristateOr(Tristate t, bool otherwise) { return t == Tristate::kUnset ? otherwise : t == Tristate::kOn; }

enum class CudaQuarantine : uint8_t { kAdaptive = 0, kStrict = 1 };

// An integer row whose default is unset: each backend applies its own.
constexpr uint64_t kUnsetU64 = UINT64_MAX;

}  // namespace mate

#endif  // MATE_OPTIONS_OPTION_TYPES_H_
