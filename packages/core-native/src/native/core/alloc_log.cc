#include "core/alloc_log.h"

#include <stdio.h>

#include "core/stack_store.h"

namespace mate {

namespace {
const char* TestName(uint32_t id) {
  const char* s = StackStore::Get().Lookup(id);
  return s ? s : "";
}
}  // namespace

void LogAlloc(uint64_t id, uintptr_t ptr, uint64_t requested, uint64_t mapped, Mode mode, const char* backend,
              uint32_t test_id) {
  dprintf(2, "[mate-guard] alloc #%llu ptr=0x%llx requested=%llu mapped=%llu mode=%s backend=%s test=\"%s\"\n",
          static_cast<unsigned long long>(id), static_cast<unsigned long long>(ptr),
          static_cast<unsigned long long>(requested), static_cast<unsigned long long>(mapped), ModeName(mode), backend,
          TestName(test_id));
}

void LogFree(uint64_t id, uintptr_t ptr, uint64_t requested, Mode mode, const char* backend, uint32_t test_id) {
  dprintf(2, "[mate-guard] free #%llu ptr=0x%llx requested=%llu mode=%s backend=%s test=\"%s\"\n",
          static_cast<unsigned long long>(id), static_cast<unsigned long long>(ptr),
          static_cast<unsigned long long>(requested), ModeName(mode), backend, TestName(test_id));
}

void LogUnguarded(uintptr_t ptr, uint64_t requested, const char* reason, const char* backend, uint32_t test_id) {
  dprintf(2, "[mate-guard] alloc unguarded ptr=0x%llx requested=%llu backend=%s reason=\"%s\" test=\"%s\"\n",
          static_cast<unsigned long long>(ptr), static_cast<unsigned long long>(requested), backend,
          reason ? reason : "", TestName(test_id));
}

}  // namespace mate
