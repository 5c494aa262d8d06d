#ifndef MATE_CORE_SLOT_BATCHING_H_
#define MATE_CORE_SLOT_BATCHING_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>

// Tuning of the allocator's batched slot work (slot_batching.cc): opening
// small slots several at a time, closing freed slots in batches on a
// background thread, and keeping one-page slots ready ahead of need (on
// primer threads of their own).
namespace mate {
namespace batching {

// Slots this small (data + guard pages) are opened several at a time, in one
// system call, when one is needed (guard-install backend). An open slot
// waiting in line costs no memory until it is written (its pages are not
// faulted in; one-page slots excepted, see OpenAhead) and keeps its guard
// page: up to 124 KiB, so a loop of 64 KiB buffers makes one system call
// per 16 instead of one each.
constexpr uint32_t kOpenAheadMaxPages = 32;
constexpr size_t kOpenAhead = 16;
// Freed slots wait for the background thread; past this many the freeing
// thread closes them itself (bounds how many freed slots are still open).
constexpr size_t kCloseBackstop = 16384;
// A closed batch enters the quarantine this many slots per hold of the
// allocator's lock: whole GC bursts held it up to milliseconds (~30 ns a
// slot, evictions included; bench/README.md), stalling every allocation
// meanwhile.
constexpr size_t kQuarantineChunk = 256;
// How long the background thread lets a burst of frees gather (bounds how
// long a freed slot stays accessible, with the checks and the backstop).
constexpr useconds_t kCloseGatherUs = 100;
// One-page slots the primer threads keep open and filled with canary bytes
// (or zero, for buffers over half a page) ahead of need, so that such an
// allocation only zeroes its own bytes (no system call, no page fault on
// the allocating thread).
constexpr uint32_t kPrimedPages = 2;  // data + guard
// Each pool is refilled to kPrimeTarget once it falls below kPrimeLow (at
// most 4 MiB of primed pages a pool): deep enough that a burst of
// allocations finds primed slots while the primers catch up.
constexpr size_t kPrimeTarget = 1024;
constexpr size_t kPrimeLow = 768;
constexpr size_t kPrimeBatch = 64;
// Primer threads: one, or two where the process may run on 4 CPUs or more.
// A slot takes a primer about as long (guard removal, page fault, fill) as
// an allocation takes the JS thread, so one primer alone falls behind a
// loop of allocations; on 2 CPUs a second would only take the JS thread's.
constexpr size_t kMaxPrimers = 2;
constexpr size_t kCpusPerExtraPrimer = 4;

// Kept slots (kept_slots.cc): native one-page allocations reuse this many
// slots whose pages stay mapped; each is two mappings (data, guard: 16,384
// of vm.max_map_count's 65,530 by default), and its page stays resident
// while the slot is quarantined (32 MiB at most). A freed kept slot is
// reused after the other kept slots not live: the quarantine of native
// one-page allocations is up to 8,191 frees (regular slots: 65,536).
constexpr uint32_t kKeptSlots = 8192;

}  // namespace batching
}  // namespace mate

#endif  // MATE_CORE_SLOT_BATCHING_H_
