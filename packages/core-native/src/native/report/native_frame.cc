#include "report/native_frame.h"

namespace mate {

const char* UnwindMethodName(UnwindMethod m) {
  switch (m) {
    case UnwindMethod::kPcOnly:
      return "pc-only";
    case UnwindMethod::kUnwindTables:
      return "unwind-tables";
    case UnwindMethod::kFramePointers:
      return "frame-pointers";
    case UnwindMethod::kNone:
      break;
  }
  return "none";
}

}  // namespace mate
