#ifndef MATE_REPORT_NATIVE_FRAME_H_
#define MATE_REPORT_NATIVE_FRAME_H_

// A native frame as reports carry it (module + offset, symbolized later),
// and how a stack was found: the crash handler's backtraces and every
// report's writer share them.
#include <cstddef>
#include <cstdint>

namespace mate {

// Enough to reach from an addon's bug to the JS call that ran it.
constexpr size_t kMaxNativeFrames = 64;

struct NativeFrame {
  uintptr_t pc = 0;
  uintptr_t offset = 0;                 // pc - load bias of `module` (link-time address); pc when unknown
  const char* module = nullptr;         // absolute path (never freed), nullptr when unknown
  uint32_t module_index = 0xffffffffu;  // module map index (kNoModule when unknown)
  // `pc` is a return address (every frame but the interrupted one): the
  // call is the instruction before it, so symbolize offset - 1.
  bool return_address = false;
};

enum class UnwindMethod : uint8_t {
  kNone,           // nothing captured
  kPcOnly,         // the faulting pc alone
  kUnwindTables,   // DWARF CFI (.eh_frame), through the signal frame
  kFramePointers,  // frame-pointer chain: the fallback when the tables gave only the pc
};
const char* UnwindMethodName(UnwindMethod m);  // "unwind-tables", ...

}  // namespace mate

#endif  // MATE_REPORT_NATIVE_FRAME_H_
