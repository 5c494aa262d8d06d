#ifndef MATE_REPORT_DEATH_DETAIL_H_
#define MATE_REPORT_DEATH_DETAIL_H_

#include <cstdint>

#include "report/report_kind.h"

namespace mate {

// What a deadly-signal or uncaught-exception report adds: the signal as the
// kernel described it, and what mate-guard could tell about the death.
struct DeathDetail {
  int signal = 0;
  int code = 0;    // si_code: the kernel's reason (> 0) or how a process sent it (<= 0)
  int sender = 0;  // the sending process (kill, raise, abort), 0 when the kernel raised it
  bool has_address = false;
  uintptr_t address = 0;                  // faulting address (SIGSEGV, SIGBUS) or instruction (SIGILL, SIGFPE, SIGTRAP)
  AccessType access = AccessType::kNone;  // SIGSEGV: how the address was touched, where known
  const char* abort_message = nullptr;    // glibc's message before it aborted ("free(): invalid pointer")
  const char* exception_type = nullptr;   // uncaught C++ exception: its type
  const char* exception_what = nullptr;   // and its what(), nullptr when it is no std::exception
  // The dying stack passes through free()/realloc() with a guarded pointer:
  // a free mate-guard's router did not see. The allocation is the
  // violation's record; `free_frame` the access-stack index of the free
  // function, `free_function` its name.
  bool guarded_free = false;
  uint32_t free_frame = 0;
  const char* free_function = nullptr;
  uintptr_t pointer = 0;
  // A general-protection fault of an instruction that needs an aligned
  // memory operand and was given a misaligned one (movdqa).
  const char* misaligned_instruction = nullptr;
  uintptr_t misaligned_address = 0;
  uint32_t misaligned_alignment = 0;
  // The dying process is a fork() of the guarded one that did not exec
  // (a test that forks a child to watch it die): its parent, the program,
  // sees the death; no runner worker died.
  bool forked = false;
};

}  // namespace mate

#endif  // MATE_REPORT_DEATH_DETAIL_H_
