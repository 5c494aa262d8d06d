#ifndef MATE_CORE_PROCESS_STATE_H_
#define MATE_CORE_PROCESS_STATE_H_

#include <cstdint>

namespace mate {

// Process-wide, shared by every allocator (host buffers, device memory):
// one allocation numbering, so "#42" names one allocation whichever backend
// made it, and one running test, so every report names the same test.
uint64_t NextAllocationId();
void SetCurrentTestId(uint32_t stack_store_id);  // 0 = no test running
uint32_t CurrentTestId();

}  // namespace mate

#endif  // MATE_CORE_PROCESS_STATE_H_
