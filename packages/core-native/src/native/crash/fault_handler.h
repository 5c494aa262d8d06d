#ifndef MATE_CRASH_FAULT_HANDLER_H_
#define MATE_CRASH_FAULT_HANDLER_H_

#include <cstddef>
#include <cstdint>

#include "core/guarded_allocator.h"
#include "crash/violation.h"

namespace mate {

// Turns a fault address into a violation. False when the address is not one
// of ours (the fault then belongs to whoever handled it before us).
// Async-signal-safe: lock-free reads of the allocator's tables.
bool DescribeFault(const GuardedAllocator& a, uintptr_t addr, const char* access, Violation* out);

// Builds the canary-corruption violation for damage found at free or by a
// check (not in a signal handler).
Violation DescribeCanary(const GuardedAllocator& a, const CanaryViolation& c);

// Builds a double-free / invalid-free violation found on a native free
// path: `record` the allocation concerned (nullptr when the pointer is no
// allocation's), `frames` those of the bad free, `test` the test running then.
Violation DescribeBadFree(const GuardedAllocator& a, bool double_free, const SlotRecord* record,
                          uintptr_t address, uint32_t frames, uint32_t test);

// Formats `v`, prints it to stderr and writes the JSON file. Uses the
// caller's buffers so the signal handler can pass static ones.
void EmitReport(const Violation& v, char* text, size_t text_cap, char* json, size_t json_cap,
                bool print);

// Installs the SIGSEGV/SIGBUS handler (chaining to the previous one for
// faults that are not ours) and an alternate signal stack for this thread.
bool InstallFaultHandler();
// An alternate signal stack for the calling thread, if it has none.
void EnsureAltStack();

}  // namespace mate

#endif  // MATE_CRASH_FAULT_HANDLER_H_
