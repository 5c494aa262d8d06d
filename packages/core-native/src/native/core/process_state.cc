#include "core/process_state.h"

namespace mate {

namespace {
uint64_t g_last_id = 0;
uint32_t g_current_test = 0;
}  // namespace

uint64_t NextAllocationId() { return __atomic_add_fetch(&g_last_id, 1, __ATOMIC_RELAXED); }
void SetCurrentTestId(uint32_t id) { __atomic_store_n(&g_current_test, id, __ATOMIC_RELEASE); }
uint32_t CurrentTestId() { return __atomic_load_n(&g_current_test, __ATOMIC_ACQUIRE); }

}  // namespace mate
