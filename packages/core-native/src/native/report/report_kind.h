#ifndef MATE_REPORT_REPORT_KIND_H_
#define MATE_REPORT_REPORT_KIND_H_

#include <cstdint>

namespace mate {

// Every kind of violation mate-guard reports: the one list. The TS side's
// (src/ts/report/kinds.ts) is generated from it (`npm run gen:kinds`).
#define MATE_REPORT_KINDS(X)                       \
  X(kHeapBufferOverflow, "heap-buffer-overflow")   \
  X(kHeapBufferUnderflow, "heap-buffer-underflow") \
  X(kHeapUseAfterFree, "heap-use-after-free")      \
  X(kCanaryCorruption, "canary-corruption")        \
  X(kInvalidFree, "invalid-free")                  \
  X(kDoubleFree, "double-free")                    \
  X(kCrossStreamFree, "cross-stream-free")         \
  X(kIllegalAddress, "illegal-address")            \
  X(kDeviceAssert, "device-assert")                \
  X(kDeviceFault, "device-fault")                  \
  X(kWildAccess, "wild-access")                    \
  X(kDeadlySignal, "deadly-signal")                \
  X(kUncaughtException, "uncaught-exception")      \
  X(kOutOfMemory, "out-of-memory")

enum class ReportKind : uint8_t {
#define MATE_KIND_ENUM(id, name) id,
  MATE_REPORT_KINDS(MATE_KIND_ENUM)
#undef MATE_KIND_ENUM
};

constexpr int kReportKindCount = 0
#define MATE_KIND_COUNT(id, name) +1
    MATE_REPORT_KINDS(MATE_KIND_COUNT)
#undef MATE_KIND_COUNT
    ;

// A kernel's exception, CUDA's sticky error (the context is lost): an
// illegal address, a device-side assert, or another (misaligned address,
// illegal instruction, launch failure...).
constexpr bool IsKernelException(ReportKind k) {
  return k == ReportKind::kIllegalAddress || k == ReportKind::kDeviceAssert || k == ReportKind::kDeviceFault;
}

// The kind's name as reports and JSON spell it. Async-signal-safe.
const char* ReportKindName(ReportKind kind);

// How the bad access touched memory: a fault knows READ or WRITE (x86-64);
// canary damage and frees have no access.
enum class AccessType : uint8_t { kNone, kRead, kWrite, kUnknown };
const char* AccessTypeName(AccessType access);  // nullptr for kNone

}  // namespace mate

#endif  // MATE_REPORT_REPORT_KIND_H_
