#ifndef MATE_CORE_ALLOC_LOG_H_
#define MATE_CORE_ALLOC_LOG_H_

#include <cstdint>

#include "core/slot.h"

namespace mate {

// The `logAllocations` lines, one format for every backend:
// [mate-guard] alloc #N ptr=0x... requested=N mapped=N mode=tail backend=host test="..."
void LogAlloc(uint64_t id, uintptr_t ptr, uint64_t requested, uint64_t mapped, Mode mode, const char* backend,
              uint32_t test_id);
void LogFree(uint64_t id, uintptr_t ptr, uint64_t requested, Mode mode, const char* backend, uint32_t test_id);
void LogUnguarded(uintptr_t ptr, uint64_t requested, const char* reason, const char* backend, uint32_t test_id);

}  // namespace mate

#endif  // MATE_CORE_ALLOC_LOG_H_
