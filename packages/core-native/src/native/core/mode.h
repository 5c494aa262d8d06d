#ifndef MATE_CORE_MODE_H_
#define MATE_CORE_MODE_H_

#include <cstdint>

namespace mate {

// Which side of an allocation the guard page is on: tail (after the end,
// overruns fault) or head (before the start, underruns fault).
enum class Mode : uint8_t { kTail = 0, kHead = 1 };

inline const char* ModeName(Mode m) { return m == Mode::kTail ? "tail" : "head"; }

}  // namespace mate

#endif  // MATE_CORE_MODE_H_
