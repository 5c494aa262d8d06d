#ifndef MATE_CRASH_DESCRIBE_H_
#define MATE_CRASH_DESCRIBE_H_

#include <cstdint>

#include "core/guarded_allocator.h"
#include "native_heap/native_heap.h"
#include "report/violation.h"

namespace mate {

// The process's counters into `out` (the run's summary reads them when the
// process dies before writing its own). Async-signal-safe.
void FillProcess(const GuardedAllocator& a, Violation* out);

// `r` as the violation's allocation (record, geometry, backend), the
// running test and the counters. Async-signal-safe.
void FillRecord(const GuardedAllocator& a, const SlotRecord& r, Violation* out);

// Turns a fault address into a violation. False when the address is not one
// of ours (the fault then belongs to whoever handled it before us).
// Async-signal-safe: lock-free reads of the allocator's tables.
bool DescribeFault(const GuardedAllocator& a, uintptr_t addr, AccessType access, Violation* out);

// The canary-corruption violation for damage found at free or by a check
// (not in a signal handler).
Violation DescribeCanary(const GuardedAllocator& a, const CanaryViolation& c);

// A double free or invalid free found on a native free path: `record` the
// allocation concerned (nullptr when the pointer is no allocation's),
// `frames` the StackStore frames of the bad free, `test` the test running then.
Violation DescribeBadFree(const GuardedAllocator& a, bool double_free, const SlotRecord* record, uintptr_t address,
                          uint32_t frames, uint32_t test);

// A finding of the native heap's free paths (native_heap.h): a bad free,
// or a write after free found in the foreign quarantine (a block the
// guard did not allocate: heap-use-after-free on WRITE, guard method
// "foreign-quarantine", allocation id 0, its free's site).
Violation DescribeFinding(const GuardedAllocator& a, const native_heap::Finding& f);

}  // namespace mate

#endif  // MATE_CRASH_DESCRIBE_H_
